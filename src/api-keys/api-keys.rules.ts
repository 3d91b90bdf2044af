/**
 * The rules of a merchant's API keys (docs/design.md §3), apart from storage and HTTP: what making,
 * rolling and revoking one does to the set. Every change is decided
 * here on the set as read, and written back whole by one conditional update (src/auth/merchants.repository.ts).
 */
import { InvalidRequestError } from '../errors.js';
import { ApiKeyNotFoundError, LastApiKeyError } from './api-keys.errors.js';
import { isActive, timestampIn, type StoredKey } from '../auth/credentials.js';

export const MAX_ACTIVE_KEYS = 100;
export const MAX_ROLL_HOURS = 168;
export const DEFAULT_ROLL_HOURS = 24;

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
