/**
 * Secrets kept at rest (a billing connection's Stripe keys) are sealed with AES-256-GCM under the
 * operator's key, SECRETS_KEY (32 bytes, base64). On the embedded database without one, a key is
 * generated once and kept beside the embedded data (docs/billing.md), so that `npm start` works as
 * it is; on a MongoDB URI without one, storing a secret is refused: a key made up per process
 * would leave every other process, and the next start, unable to read what it sealed.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { ConfigError } from '../config.errors.js';
import { SecretsKeyMissingError, SecretUnreadableError } from './secrets.errors.js';

export interface SecretBox {
  seal(plain: string): string;
  open(sealed: string): string;
}

/** The sealed form's version prefix: a later algorithm or key rotation gets another. */
const VERSION = 'v1';
const KEY_BYTES = 32;
const IV_BYTES = 12;

/** SECRETS_KEY's value as a key: 32 bytes in base64, else a ConfigError naming the variable. */
export function secretsKeyOf(raw: string): Buffer {
  const text = raw.trim();
  const key = Buffer.from(text, 'base64');
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(text) || key.length !== KEY_BYTES)
    throw new ConfigError(`SECRETS_KEY must be ${KEY_BYTES} bytes in base64 (openssl rand -base64 32)`);
  return key;
}

function aesGcmBox(key: Buffer): SecretBox {
  return {
    seal(plain) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return [VERSION, iv.toString('base64'), cipher.getAuthTag().toString('base64'), body.toString('base64')].join('.');
    },
    open(sealed) {
      const [version, iv, tag, body] = sealed.split('.');
      if (version !== VERSION || iv === undefined || tag === undefined || body === undefined)
        throw new SecretUnreadableError('not a sealed secret');
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64'));
        decipher.setAuthTag(Buffer.from(tag, 'base64'));
        return Buffer.concat([decipher.update(Buffer.from(body, 'base64')), decipher.final()]).toString('utf8');
      } catch (error) {
        throw new SecretUnreadableError('the secret does not open under this key (another SECRETS_KEY?)', { cause: error });
      }
    },
  };
}

/** A box that refuses every secret, saying what the operator must do. */
function keylessBox(): SecretBox {
  const refuse = (): never => {
    throw new SecretsKeyMissingError('The service cannot store secrets: its operator has not set SECRETS_KEY');
  };
  return { seal: refuse, open: refuse };
}

/** The embedded database's key: read from `file`, or made and written there (owner-only) the first time. */
function embeddedKey(file: string): Buffer {
  if (existsSync(file)) return secretsKeyOf(readFileSync(file, 'utf8'));
  mkdirSync(dirname(file), { recursive: true });
  const key = randomBytes(KEY_BYTES);
  // `wx`: where two processes make it at once, the second fails and reads the first's.
  try {
    writeFileSync(file, key.toString('base64'), { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return secretsKeyOf(readFileSync(file, 'utf8'));
  }
  return key;
}

export interface SecretBoxConfig {
  /** SECRETS_KEY, base64. */
  readonly secretsKey: string | undefined;
  /** On the embedded database: where its generated key is kept; undefined on a MongoDB URI. */
  readonly embeddedKeyFile?: string | undefined;
}

export function secretBoxFrom({ secretsKey, embeddedKeyFile }: SecretBoxConfig): SecretBox {
  if (secretsKey !== undefined) return aesGcmBox(secretsKeyOf(secretsKey));
  if (embeddedKeyFile !== undefined) return aesGcmBox(embeddedKey(embeddedKeyFile));
  return keylessBox();
}
