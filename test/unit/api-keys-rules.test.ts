/** The rules of a merchant's key set (src/api-keys/api-keys.rules.ts), on sets written out by hand. */
import { describe, expect, it } from 'vitest';
import { MAX_ACTIVE_KEYS, revoked, rolled, withNewKey } from '../../src/api-keys/api-keys.rules.js';
import { newKey, timestampIn, type StoredKey } from '../../src/auth/credentials.js';
import { toProblem } from '../../src/http/problem.middleware.js';

const NOW = Date.parse('2026-11-24T12:00:00.000Z');
const now = timestampIn(0, NOW);
const key = (id: string, expiresAt: string | null = null): StoredKey => ({
  id,
  hash: `hash-${id}`,
  prefix: 'sk_abcdefgh',
  createdAt: '2026-11-01T00:00:00.000000Z',
  expiresAt,
});

/** The problem code a refused rule answers with (as the API renders it), or 'none' when nothing is thrown. */
function refusedWith(act: () => unknown): string | undefined {
  try {
    act();
  } catch (error) {
    return toProblem(error)?.code;
  }
  return 'none';
}

describe('API key rules', () => {
  it('a roll sets the old key to expire the given hours ahead, or keeps an earlier expiry', () => {
    const added = key('new');
    expect(rolled([key('a')], 'a', added, 24, NOW).old.expiresAt).toBe(timestampIn(24 * 3_600_000, NOW));
    const soon = timestampIn(3_600_000, NOW);
    expect(rolled([key('a', soon)], 'a', added, 24, NOW).old.expiresAt).toBe(soon);
  });

  it('a roll with 0 hours leaves only the new key active', () => {
    expect(rolled([key('a')], 'a', key('new'), 0, NOW).keys.map((k) => k.id)).toEqual(['new']);
  });

  it('an expired or unknown key can be neither rolled nor revoked: 0025', () => {
    const set = [key('a'), key('gone', timestampIn(-1, NOW))];
    for (const id of ['gone', 'nope']) {
      expect(refusedWith(() => rolled(set, id, key('new'), 1, NOW))).toBe('0025');
      expect(refusedWith(() => revoked(set, id, now))).toBe('0025');
    }
  });

  it('revoking is refused (0031) when only keys waiting to expire would remain', () => {
    const expiring = key('old', timestampIn(3_600_000, NOW));
    expect(refusedWith(() => revoked([expiring, key('new')], 'new', now))).toBe('0031');
    expect(revoked([expiring, key('new')], 'old', now).keys.map((k) => k.id)).toEqual(['new']);
  });

  it(`at most ${MAX_ACTIVE_KEYS} active keys; expired ones are dropped from the set and do not count`, () => {
    const full = Array.from({ length: MAX_ACTIVE_KEYS }, (_, i) => key(`k${i}`));
    expect(refusedWith(() => withNewKey(full, key('one-more'), now))).toBe('0040');
    const withExpired = [...full.slice(1), key('expired', timestampIn(-1, NOW))];
    expect(withNewKey(withExpired, key('one-more'), now)).toHaveLength(MAX_ACTIVE_KEYS);
  });

  it('a new key is sk_live_ (sk_test_ in a test mode) and 43 characters, its prefix its first 16, and only its hash is in what is stored', () => {
    for (const [made, start] of [
      [newKey(NOW), 'sk_live_'],
      [newKey(NOW, false), 'sk_test_'],
    ] as const) {
      expect(made.key).toMatch(new RegExp(`^${start}[A-Za-z0-9_-]{43}$`));
      expect(made.stored.prefix).toBe(made.key.slice(0, 16));
      expect(JSON.stringify(made.stored)).not.toContain(made.key);
    }
  });
});
