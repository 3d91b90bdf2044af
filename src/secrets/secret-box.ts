/**
 * Secrets the service must use again (a Kafka destination's password), stored sealed with
 * AES-256-GCM under the operator's key: a copy of the database alone reveals none of them. A sealed
 * value is `v1.` + base64 of IV (12 bytes), tag (16 bytes) and ciphertext, so the format can change.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { SecretsUnavailableError } from './secrets.errors.js';

export interface SecretBox {
  seal(plain: string): string;
  open(sealed: string): string;
}

const VERSION = 'v1.';
const IV_BYTES = 12;
const TAG_BYTES = 16;

function aesGcmBox(key: Buffer): SecretBox {
  if (key.length !== 32) throw new Error('a secret box needs a 32-byte key');
  return {
    seal(plain) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return VERSION + Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
    },
    open(sealed) {
      if (!sealed.startsWith(VERSION)) throw new Error('not a sealed secret of this service');
      const raw = Buffer.from(sealed.slice(VERSION.length), 'base64');
      const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, IV_BYTES));
      decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
    },
  };
}

/** Where no key can be had: nothing can be sealed, and so nothing was. */
const NO_KEY: SecretBox = {
  seal() {
    throw new SecretsUnavailableError('This service has no SECRETS_KEY, so it cannot store a password; ask its operator.');
  },
  open() {
    throw new SecretsUnavailableError('This service has no SECRETS_KEY, so it cannot read a stored password.');
  },
};

/** The embedded database's key: made once, on first use, and kept beside its data, readable by its owner alone. */
function embeddedKey(file: string): Buffer {
  if (!existsSync(file)) {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, randomBytes(32).toString('base64'), { flag: 'wx', mode: 0o600 });
  }
  chmodSync(file, 0o600);
  return Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
}

export interface SecretBoxConfig {
  readonly secretsKey: Buffer | undefined;
  readonly mongodbUri: string | undefined;
  /** Where the embedded database keeps its key (used only without SECRETS_KEY and MONGODB_URI). */
  readonly embeddedKeyFile: string;
}

/**
 * SECRETS_KEY when set; on the embedded database without it, a key made once and kept in
 * `embeddedKeyFile`; on MongoDB without it, a box that refuses, since a key the operator does not
 * hold would make every stored secret unreadable by the next process.
 */
export function secretBoxFrom(config: SecretBoxConfig): SecretBox {
  if (config.secretsKey) return aesGcmBox(config.secretsKey);
  if (config.mongodbUri === undefined) return aesGcmBox(embeddedKey(config.embeddedKeyFile));
  return NO_KEY;
}
