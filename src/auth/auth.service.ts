/**
 * API keys (docs/design.md §3): random 32-byte secrets shown once at creation; only their SHA-256
 * hash is stored, found by an index and compared in constant time. Resolved keys, and keys found
 * to be unknown, are kept for a short while so that neither hot paths nor a flood of one wrong
 * key pay a database round trip per request.
 */
import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { Problems, ProblemError } from '../errors.js';
import type { Merchant, MerchantsRepository } from './merchants.repository.js';

const KEY_PREFIX = 'sk_';
const CACHE_LIMIT = 10_000;

export function hashApiKey(apiKey: string): string {
  return createHash('sha256').update(apiKey, 'utf8').digest('hex');
}

/**
 * The one key a request presents: `x-api-key` or its variant `x_api_key`. Both may be sent, but
 * then with the same key: two different keys are refused rather than one silently preferred.
 */
export function presentedApiKey(dashed: string | undefined, underscored: string | undefined): string | undefined {
  if (dashed !== undefined && underscored !== undefined && dashed !== underscored) {
    throw new ProblemError(Problems.unauthorized, 'x-api-key and x_api_key carry different keys; send one.');
  }
  return dashed ?? underscored;
}

export interface CreatedMerchant {
  readonly merchantId: string;
  readonly apiKey: string;
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

  constructor(
    private readonly merchants: MerchantsRepository,
    private readonly cacheTtlMs: number,
  ) {}

  async createMerchant(name: string): Promise<CreatedMerchant> {
    const apiKey = KEY_PREFIX + randomBytes(32).toString('base64url');
    const merchantId = randomUUID();
    const apiKeyHash = hashApiKey(apiKey);
    await this.merchants.insert({ id: merchantId, name, apiKeyHash });
    this.unknown.delete(apiKeyHash);
    return { merchantId, apiKey };
  }

  /** The merchant the key belongs to, or undefined for a missing or unknown key. */
  async authenticate(apiKey: string | undefined): Promise<Merchant | undefined> {
    if (!apiKey || !apiKey.startsWith(KEY_PREFIX) || apiKey.length > 200) return undefined;
    const hash = hashApiKey(apiKey);
    const cached = this.known.get(hash) ?? this.unknown.get(hash);
    if (cached && cached.expiresAt > Date.now()) return cached.merchant;
    const found = await this.merchants.findByKeyHash(hash);
    const merchant = found && sameHash(found.apiKeyHash, hash) ? found : undefined;
    this.remember(merchant ? this.known : this.unknown, hash, merchant);
    return merchant;
  }

  private remember(cache: Map<string, CacheEntry>, hash: string, merchant: Merchant | undefined): void {
    if (this.cacheTtlMs === 0) return;
    if (cache.size >= CACHE_LIMIT) cache.clear();
    cache.set(hash, { merchant, expiresAt: Date.now() + this.cacheTtlMs });
  }
}

function sameHash(stored: string, computed: string): boolean {
  const a = Buffer.from(stored, 'hex');
  const b = Buffer.from(computed, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}
