/**
 * Token buckets, in this process: `burst` at once, refilled at `perSecond`. Per merchant, every
 * request takes a token: answers carry the IETF RateLimit / RateLimit-Policy fields, and an empty
 * bucket answers 429 code 0060 with Retry-After before anything is done. Per client address, each
 * failed authentication takes one, and once the bucket is empty a failure answers 429 instead of
 * 401; a valid key is never refused by it.
 * With several HTTP processes each keeps its own buckets and takes its share of the limit,
 * `setShare(n)` with n the live HTTP processes from the heartbeats (src/fleet/heartbeat.ts), so
 * that the fleet together allows about the configured limit (docs/operations.md says how closely).
 */
import type { Context as KoaContext } from 'koa';
import { Problems, ProblemError } from '../errors.js';

interface Bucket {
  tokens: number;
  updatedAt: number;
}

/** Buckets kept before the full ones (idle keys) are forgotten: addresses are unbounded. */
const BUCKET_LIMIT = 10_000;

const MAX_RETRY_AFTER_SECONDS = 86_400;

export interface RateLimiterOptions {
  /** What is limited, for the RateLimit fields and the 429 detail. */
  readonly scope?: 'merchant' | 'address';
  /** Milliseconds, monotonic. */
  readonly now?: () => number;
}

export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private readonly scope: 'merchant' | 'address';
  private readonly now: () => number;
  private readonly windowSeconds: number;
  /** This process's part of the limit: 1 / the live HTTP processes. */
  private fraction = 1;

  constructor(
    private readonly burst: number,
    private readonly perSecond: number,
    { scope = 'merchant', now = () => performance.now() }: RateLimiterOptions = {},
  ) {
    this.scope = scope;
    this.now = now;
    this.windowSeconds = Math.ceil(burst / perSecond);
  }

  /**
   * This process serves one of `processes` HTTP processes: its buckets hold and refill that share
   * of the limit. Buckets above the new share are cut down to it at their next use.
   */
  setShare(processes: number): void {
    this.fraction = 1 / Math.max(1, processes);
  }

  /** Takes one token for the key, or throws 429; sets the rate-limit fields either way. */
  enforce(key: string, ctx: KoaContext): void {
    const bucket = this.refilled(key);
    const allowed = bucket.tokens >= 1;
    if (allowed) bucket.tokens -= 1;
    this.setFields(bucket, ctx);
    if (!allowed) this.refuse(bucket, ctx);
  }

  /**
   * Sets the rate-limit fields of the key's bucket, taking nothing: the contract declares them on
   * every answer, and an answer given before the key is known (401, 413, 415) reports the address's.
   */
  report(key: string, ctx: KoaContext): void {
    this.setFields(this.refilled(key), ctx);
  }

  private setFields(bucket: Bucket, ctx: KoaContext): void {
    // The fields speak of the fleet's limit: this process's tokens scaled up by its share.
    const fleetTokens = bucket.tokens / this.fraction;
    const refillSeconds = Math.ceil((this.burst - fleetTokens) / this.perSecond);
    ctx.set('RateLimit-Policy', `"${this.scope}";q=${this.burst};w=${this.windowSeconds}`);
    ctx.set('RateLimit', `"${this.scope}";r=${Math.floor(fleetTokens)};t=${refillSeconds}`);
  }

  /** Takes one token for a failure of the key, or throws 429 when none is left (the caller answers the failure otherwise). */
  fail(key: string, ctx: KoaContext): void {
    const bucket = this.refilled(key);
    if (bucket.tokens < 1) this.refuse(bucket, ctx);
    bucket.tokens -= 1;
  }

  /**
   * Takes one token for the key: false, with Retry-After set, when none is left. For pages that
   * answer a refusal in their own form rather than as a problem.
   */
  take(key: string, ctx: KoaContext): boolean {
    const bucket = this.refilled(key);
    if (bucket.tokens < 1) {
      ctx.set('Retry-After', String(this.retryAfter(bucket)));
      return false;
    }
    bucket.tokens -= 1;
    return true;
  }

  /** Seconds until the bucket holds a token: at most a day, the bound the contract gives Retry-After, however thin this process's share. */
  private retryAfter(bucket: Bucket): number {
    return Math.min(MAX_RETRY_AFTER_SECONDS, Math.max(1, Math.ceil((1 - bucket.tokens) / (this.perSecond * this.fraction))));
  }

  private refuse(bucket: Bucket, ctx: KoaContext): never {
    const retryAfter = this.retryAfter(bucket);
    ctx.set('Retry-After', String(retryAfter));
    const limit = `${this.burst} requests per ${this.windowSeconds} seconds`;
    const detail =
      this.scope === 'merchant'
        ? `Rate limit of ${limit} exceeded; retry in ${retryAfter} s.`
        : `Too many failed authentications from this address (${limit}); retry in ${retryAfter} s.`;
    throw new ProblemError(Problems.tooManyRequests, detail);
  }

  private refilled(key: string): Bucket {
    const now = this.now();
    if (this.buckets.size >= BUCKET_LIMIT && !this.buckets.has(key)) this.forgetFull(now);
    // At least one request at once, whatever the share: a merchant is never shut out by the split.
    const burst = Math.max(1, this.burst * this.fraction);
    const bucket = this.buckets.get(key) ?? { tokens: burst, updatedAt: now };
    bucket.tokens = Math.min(burst, bucket.tokens + ((now - bucket.updatedAt) / 1000) * this.perSecond * this.fraction);
    bucket.updatedAt = now;
    this.buckets.set(key, bucket);
    return bucket;
  }

  /** A full bucket is the same as none. */
  private forgetFull(now: number): void {
    for (const [key, bucket] of this.buckets) {
      if (bucket.tokens + ((now - bucket.updatedAt) / 1000) * this.perSecond * this.fraction >= this.burst * this.fraction)
        this.buckets.delete(key);
    }
  }
}
