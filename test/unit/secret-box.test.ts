/** The secret box (src/secrets/secret-box.ts): AES-256-GCM under SECRETS_KEY, or the embedded database's kept key. */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { secretBoxFrom } from '../../src/secrets/secret-box.js';

const scratch = mkdtempSync(join(tmpdir(), 'secret-box-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('secretBoxFrom', () => {
  it('seals so that the text is not in the sealed form, a new nonce each time, and opens it back', () => {
    const box = secretBoxFrom({ secretsKey: randomBytes(32).toString('base64') });
    const a = box.seal('sk_live_secret');
    expect(a).not.toContain('sk_live_secret');
    expect(box.seal('sk_live_secret')).not.toBe(a);
    expect(box.open(a)).toBe('sk_live_secret');
  });

  it('refuses to open a sealed secret changed by one character, or sealed under another key', () => {
    const box = secretBoxFrom({ secretsKey: randomBytes(32).toString('base64') });
    const sealed = box.seal('whsec_secret');
    const body = sealed.slice(-4);
    expect(() => box.open(`${sealed.slice(0, -4)}${body === 'AAAA' ? 'BBBB' : 'AAAA'}`)).toThrow();
    expect(() => secretBoxFrom({ secretsKey: randomBytes(32).toString('base64') }).open(sealed)).toThrow(/another SECRETS_KEY/);
  });

  it('on the embedded database without a key, makes one once (owner-only) and every later box uses it', () => {
    const file = join(scratch, 'embedded', 'secrets-key');
    const sealed = secretBoxFrom({ secretsKey: undefined, embeddedKeyFile: file }).seal('sk_test_kept');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const key = readFileSync(file, 'utf8');
    expect(secretBoxFrom({ secretsKey: undefined, embeddedKeyFile: file }).open(sealed)).toBe('sk_test_kept');
    expect(readFileSync(file, 'utf8')).toBe(key);
  });

  it('without a key on a MongoDB URI, storing a secret is refused saying SECRETS_KEY is unset', () => {
    expect(() => secretBoxFrom({ secretsKey: undefined }).seal('sk_live_x')).toThrow(/SECRETS_KEY/);
  });

  it('a SECRETS_KEY that is not 32 bytes of base64 fails the start, naming the variable', () => {
    expect(() => loadConfig({ SECRETS_KEY: randomBytes(16).toString('base64') })).toThrow(/SECRETS_KEY must be 32 bytes/);
    expect(() => loadConfig({ SECRETS_KEY: 'not base64!' })).toThrow(/SECRETS_KEY/);
    expect(loadConfig({ SECRETS_KEY: randomBytes(32).toString('base64') }).secretsKey).toBeDefined();
  });
});
