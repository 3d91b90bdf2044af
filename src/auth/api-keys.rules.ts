/**
 * The rules of a merchant's API keys (docs/design.md §3), apart from storage and HTTP: which keys
 * are active, and what making, rolling and revoking one does to the set. Every change is decided
 * here on the set as read, and written back whole by one conditional update (merchants.repository.ts).
 */
import { hash, randomBytes } from 'node:crypto';
import { InvalidRequestError } from '../errors.js';
import { ApiKeyNotFoundError, LastApiKeyError } from './auth.errors.js';
import { formatTimestamp } from '../lib/clock.js';
import { uuidv7 } from '../lib/ids.js';

/** Every key starts so; keys made before test mode (docs/partners.md) are `sk_` and 43 characters, and stay live. */
export const KEY_PREFIX = 'sk_';
/** A new key's start, by the mode of the tenant it belongs to (src/merchants/livemode.ts). */
const MODE_PREFIX = { live: 'sk_live_', test: 'sk_test_' } as const;
/** The random characters of a key shown in lists, after its mode prefix. */
const SHOWN_RANDOM = 8;
export const MAX_ACTIVE_KEYS = 100;
export const MAX_ROLL_HOURS = 168;
export const DEFAULT_ROLL_HOURS = 24;

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

function notFound(keyId: string): ApiKeyNotFoundError {
  return new ApiKeyNotFoundError(`API key ${keyId} not found`);
}

function activeOnly(keys: readonly StoredKey[], now: string): StoredKey[] {
  return keys.filter((key) => isActive(key, now));
}

function withinLimit(keys: readonly StoredKey[]): readonly StoredKey[] {
  if (keys.length > MAX_ACTIVE_KEYS) {
    throw new InvalidRequestError(`A merchant has at most ${MAX_ACTIVE_KEYS} active API keys; revoke one first.`);
  }
  return keys;
}

/** The set with a new key; expired keys are dropped from it. */
export function withNewKey(keys: readonly StoredKey[], added: StoredKey, now: string): readonly StoredKey[] {
  return withinLimit([...activeOnly(keys, now), added]);
}

/**
 * Roll: a new key, and the rolled one expiring `hours` from now (0: now), or earlier if it already
 * expires sooner. Unknown, expired and another merchant's keys are all "not found".
 */
export function rolled(
  keys: readonly StoredKey[],
  keyId: string,
  added: StoredKey,
  hours: number,
  nowMs = Date.now(),
): { keys: readonly StoredKey[]; old: StoredKey } {
  const now = timestampIn(0, nowMs);
  const active = activeOnly(keys, now);
  const old = active.find((key) => key.id === keyId);
  if (!old) throw notFound(keyId);
  const until = timestampIn(hours * 3_600_000, nowMs);
  const expiring = { ...old, expiresAt: old.expiresAt !== null && old.expiresAt < until ? old.expiresAt : until };
  return {
    keys: withinLimit([...active.map((key) => (key.id === keyId ? expiring : key)), added].filter((key) => isActive(key, now))),
    old: expiring,
  };
}

/**
 * Revoke: the key leaves the set. Refused when no other active key that never expires would
 * remain: the keys that are left would all stop working, and the merchant would be locked out.
 */
export function revoked(keys: readonly StoredKey[], keyId: string, now: string): { keys: readonly StoredKey[]; old: StoredKey } {
  const active = activeOnly(keys, now);
  const old = active.find((key) => key.id === keyId);
  if (!old) throw notFound(keyId);
  const rest = active.filter((key) => key.id !== keyId);
  if (!rest.some((key) => key.expiresAt === null)) {
    throw new LastApiKeyError(`API key ${keyId} is your last active key that does not expire; make or roll another before revoking it.`);
  }
  return { keys: rest, old };
}
