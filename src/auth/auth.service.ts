/**
 * API keys (DESIGN.md §3): random 32-byte secrets shown once at creation; only their SHA-256
 * hash is stored, found by an index and compared in constant time. Resolved keys are kept for
 * a short while so that hot paths do not pay a database round trip per request.
 */
import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import type { Merchant, MerchantsRepository } from './merchants.repository.js';

const KEY_PREFIX = 'sk_';
const CACHE_LIMIT = 10_000;

export function hashApiKey(apiKey: string): string {
  return createHash('sha256').update(apiKey, 'utf8').digest('hex');
}

export interface CreatedMerchant {
  readonly merchantId: string;
  readonly apiKey: string;
}

interface CacheEntry {
  readonly merchant: Merchant;
  readonly expiresAt: number;
}

export class AuthService {
  private readonly cache = new Map<string, CacheEntry>();

  constructor(
    private readonly merchants: MerchantsRepository,
    private readonly cacheTtlMs: number,
  ) {}

  async createMerchant(name: string): Promise<CreatedMerchant> {
    const apiKey = KEY_PREFIX + randomBytes(32).toString('base64url');
    const merchantId = randomUUID();
    await this.merchants.insert({ id: merchantId, name, apiKeyHash: hashApiKey(apiKey) });
    return { merchantId, apiKey };
  }

  /** The merchant the key belongs to, or undefined for a missing or unknown key. */
  async authenticate(apiKey: string | undefined): Promise<Merchant | undefined> {
    if (!apiKey || !apiKey.startsWith(KEY_PREFIX) || apiKey.length > 200) return undefined;
    const hash = hashApiKey(apiKey);
    const cached = this.cache.get(hash);
    if (cached && cached.expiresAt > Date.now()) return cached.merchant;
    const merchant = await this.merchants.findByKeyHash(hash);
    if (!merchant || !sameHash(merchant.apiKeyHash, hash)) return undefined;
    this.remember(hash, merchant);
    return merchant;
  }

  private remember(hash: string, merchant: Merchant): void {
    if (this.cacheTtlMs === 0) return;
    if (this.cache.size >= CACHE_LIMIT) this.cache.clear();
    this.cache.set(hash, { merchant, expiresAt: Date.now() + this.cacheTtlMs });
  }
}

function sameHash(stored: string, computed: string): boolean {
  const a = Buffer.from(stored, 'hex');
  const b = Buffer.from(computed, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}
