/**
 * An API key as a credential (docs/design.md §3): how one is made, hashed and stored, and whether
 * it is active. Authentication resolves keys by these; the key-set rules (src/api-keys/) change
 * which keys a merchant holds.
 */
import { hash, randomBytes } from 'node:crypto';
import { formatTimestamp } from '../lib/clock.js';
import { uuidv7 } from '../lib/ids.js';

/** Every key starts so; keys made before test mode (docs/partners.md) are `sk_` and 43 characters, and stay live. */
export const KEY_PREFIX = 'sk_';
/** A new key's start, by the mode of the tenant it belongs to (src/merchants/livemode.ts). */
const MODE_PREFIX = { live: 'sk_live_', test: 'sk_test_' } as const;
/** The random characters of a key shown in lists, after its mode prefix. */
const SHOWN_RANDOM = 8;

/** A key as stored: its hash, never the key. Times are timestamps (§5), which compare as strings. */
export interface StoredKey {
  readonly id: string;
  readonly hash: string;
  readonly prefix: string;
  readonly createdAt: string;
  /** null: never expires. */
  readonly expiresAt: string | null;
}

/** A key made now: the one moment its secret exists outside the client. */
export interface NewKey {
  readonly stored: StoredKey;
  readonly key: string;
}

/** Once per request: crypto's one-shot `hash` (utf-8 in, hex out) costs less than a Hash object. */
export function hashApiKey(apiKey: string): string {
  return hash('sha256', apiKey, 'hex');
}

export function timestampIn(ms: number, now = Date.now()): string {
  return formatTimestamp(BigInt(now + ms) * 1000n);
}

export function isActive(key: StoredKey, now: string): boolean {
  return key.expiresAt === null || key.expiresAt > now;
}

/** A key of a live merchant (`sk_live_…`) or of a test mode (`sk_test_…`). */
export function newKey(now = Date.now(), livemode = true): NewKey {
  const start = livemode ? MODE_PREFIX.live : MODE_PREFIX.test;
  const key = start + randomBytes(32).toString('base64url');
  return {
    key,
    stored: {
      id: uuidv7(now),
      hash: hashApiKey(key),
      prefix: key.slice(0, start.length + SHOWN_RANDOM),
      createdAt: timestampIn(0, now),
      expiresAt: null,
    },
  };
}
