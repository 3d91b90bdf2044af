/**
 * API keys (docs/design.md §3): random 32-byte secrets shown once at creation; only their SHA-256
 * hash is stored, found by an index and compared in constant time. Resolved keys, and keys found
 * to be unknown, are kept for a short while (AUTH_CACHE_TTL_MS) so that neither hot paths nor a
 * flood of one wrong key pay a database round trip per request. So a key revoked in another
 * process stops working here within that time; one revoked here, at once (forget), and one that
 * expires, at its expiry (a cached key is kept no longer).
 */
import { randomUUID, timingSafeEqual } from 'node:crypto';
import { NotAuthenticatedError } from './auth.errors.js';
import { nowTimestamp } from '../lib/clock.js';
import { testModeIdOf } from '../merchants/livemode.js';
import { hashApiKey, isActive, KEY_PREFIX, newKey } from './credentials.js';
import type { LastUsedRecorder } from './last-used.js';
import type { MerchantsRepository } from './merchants.repository.js';

export { hashApiKey };

const CACHE_LIMIT = 10_000;

/**
 * The one key a request presents: `x-api-key` or its variant `x_api_key`. Both may be sent, but
 * then with the same key: two different keys are refused rather than one silently preferred.
 */
export function presentedApiKey(dashed: string | undefined, underscored: string | undefined): string | undefined {
  if (dashed !== undefined && underscored !== undefined && dashed !== underscored) {
    throw new NotAuthenticatedError('x-api-key and x_api_key carry different keys; send one.');
  }
  return dashed ?? underscored;
}

/** Who a request is: the merchant its key resolved to, and which of the merchant's keys it was (its id, never the key). */
export interface Merchant {
  readonly id: string;
  readonly apiKeyId: string;
}

export interface CreatedMerchant {
  readonly merchantId: string;
  /** A live key (`sk_live_…`). */
  readonly apiKey: string;
  /** A key of the merchant's test mode (`sk_test_…`, docs/partners.md). */
  readonly testApiKey: string;
}

interface CacheEntry {
  /** undefined: the key is unknown. */
  readonly merchant: Merchant | undefined;
  readonly expiresAt: number;
}

export class AuthService {
  private readonly known = new Map<string, CacheEntry>();
  // Apart from the known keys, so that a flood of random keys cannot push them out.
  private readonly unknown = new Map<string, CacheEntry>();
  /** Keys forgotten so far: a lookup that began before one is not remembered (it may have read a key since revoked). */
  private forgotten = 0;

  constructor(
    private readonly merchants: MerchantsRepository,
    private readonly cacheTtlMs: number,
    private readonly lastUsed: LastUsedRecorder,
  ) {}

  async createMerchant(name: string): Promise<CreatedMerchant> {
    const { key, stored } = newKey();
    const merchantId = randomUUID();
    await this.merchants.insert({ id: merchantId, name, key: stored });
    const test = newKey(Date.now(), false);
    await this.merchants.insertTestMode(merchantId, testModeIdOf(merchantId), name, [test.stored]);
    this.forget(stored.hash);
    this.forget(test.stored.hash);
    return { merchantId, apiKey: key, testApiKey: test.key };
  }

  /** The merchant's test mode, made now (without keys) if it has none yet: its id. */
  async ensureTestMode(liveMerchantId: string, name = 'Merchant'): Promise<string> {
    const id = testModeIdOf(liveMerchantId);
    await this.merchants.insertTestMode(liveMerchantId, id, name, []);
    return id;
  }

  /** The merchant the key belongs to, or undefined for a missing, unknown, revoked or expired key. */
  async authenticate(apiKey: string | undefined): Promise<Merchant | undefined> {
    if (!apiKey || !apiKey.startsWith(KEY_PREFIX) || apiKey.length > 200) return undefined;
    const hash = hashApiKey(apiKey);
    const now = Date.now();
    const cached = this.known.get(hash) ?? this.unknown.get(hash);
    const merchant = cached && cached.expiresAt > now ? cached.merchant : await this.lookUp(hash);
    if (merchant) this.lastUsed.used(merchant.id, merchant.apiKeyId);
    return merchant;
  }

  /** Stops remembering a key (made, revoked or expired by this process): its next use is looked up. */
  forget(hash: string): void {
    this.forgotten++;
    this.known.delete(hash);
    this.unknown.delete(hash);
  }

  /** Last-used times still to be written, written (at shutdown). */
  flush(): Promise<void> {
    return this.lastUsed.flush();
  }

  private async lookUp(hash: string): Promise<Merchant | undefined> {
    const forgottenBefore = this.forgotten;
    const found = await this.merchants.findByKeyHash(hash);
    const key = found && sameHash(found.key.hash, hash) && isActive(found.key, nowTimestamp()) ? found.key : undefined;
    const current = forgottenBefore === this.forgotten;
    if (!found || !key) {
      if (current) this.remember(this.unknown, hash, undefined, Date.now() + this.cacheTtlMs);
      return undefined;
    }
    const merchant = { id: found.merchantId, apiKeyId: key.id };
    const until = Math.min(Date.now() + this.cacheTtlMs, key.expiresAt === null ? Infinity : Date.parse(key.expiresAt));
    if (current) this.remember(this.known, hash, merchant, until);
    return merchant;
  }

  private remember(cache: Map<string, CacheEntry>, hash: string, merchant: Merchant | undefined, expiresAt: number): void {
    if (this.cacheTtlMs === 0) return;
    if (cache.size >= CACHE_LIMIT) cache.clear();
    cache.set(hash, { merchant, expiresAt });
  }
}

function sameHash(stored: string, computed: string): boolean {
  const a = Buffer.from(stored, 'hex');
  const b = Buffer.from(computed, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}
