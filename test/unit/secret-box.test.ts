/** The secret box (src/secrets/secret-box.ts): AES-256-GCM under SECRETS_KEY, the embedded database's own key, and a refusal on MongoDB without a key. */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { secretBoxFrom } from '../../src/secrets/secret-box.js';
import { SecretsUnavailableError } from '../../src/secrets/secrets.errors.js';

const dir = mkdtempSync(join(tmpdir(), 'secret-box-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const keyFile = join(dir, 'embedded', 'secrets.key');

it('seals so that only the same key opens: a fresh IV each time, and a changed byte or another key is refused', () => {
  const key = randomBytes(32);
  const box = secretBoxFrom({ secretsKey: key, mongodbUri: 'mongodb://db', embeddedKeyFile: keyFile });
  const [a, b] = [box.seal('correct-horse'), box.seal('correct-horse')];
  expect(a).not.toBe(b);
  expect(a).not.toContain('correct-horse');
  expect(box.open(a)).toBe('correct-horse');
  const raw = Buffer.from(a.slice(3), 'base64');
  raw[raw.length - 1]! ^= 1;
  expect(() => box.open(`v1.${raw.toString('base64')}`)).toThrow();
  const other = secretBoxFrom({ secretsKey: randomBytes(32), mongodbUri: undefined, embeddedKeyFile: keyFile });
  expect(() => other.open(a)).toThrow();
});

it('on the embedded database without SECRETS_KEY, a key is made once, owner-only, and reused', () => {
  const first = secretBoxFrom({ secretsKey: undefined, mongodbUri: undefined, embeddedKeyFile: keyFile });
  const sealed = first.seal('s3cret');
  expect(statSync(keyFile).mode & 0o777).toBe(0o600);
  expect(Buffer.from(readFileSync(keyFile, 'utf8'), 'base64')).toHaveLength(32);
  const again = secretBoxFrom({ secretsKey: undefined, mongodbUri: undefined, embeddedKeyFile: keyFile });
  expect(again.open(sealed)).toBe('s3cret');
});

it('on MongoDB without SECRETS_KEY, nothing is sealed', () => {
  const box = secretBoxFrom({ secretsKey: undefined, mongodbUri: 'mongodb://db', embeddedKeyFile: keyFile });
  expect(() => box.seal('x')).toThrow(SecretsUnavailableError);
});
