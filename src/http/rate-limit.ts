/**
 * A token bucket per merchant, in this process: `burst` requests at once, refilled at
 * `perSecond`. Answers carry the IETF RateLimit / RateLimit-Policy fields; an empty bucket
 * answers 429 code 0060 with Retry-After, before anything is done. With several processes each
 * keeps its own buckets, so a merchant's total is the limit times the number of processes.
 */
import type { Context as KoaContext } from 'koa';
import { Problems, ProblemError } from '../errors.js';

interface Bucket {
  tokens: number;
  updatedAt: number;
}

export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private readonly policy: string;

  constructor(
    private readonly burst: number,
    private readonly perSecond: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.policy = `"merchant";q=${burst};w=${Math.ceil(burst / perSecond)}`;
  }

  /** Takes one token for the key, or throws 429; sets the rate-limit fields either way. */
  enforce(key: string, ctx: KoaContext): void {
    const bucket = this.refilled(key);
    const allowed = bucket.tokens >= 1;
    if (allowed) bucket.tokens -= 1;
    const refillSeconds = Math.ceil((this.burst - bucket.tokens) / this.perSecond);
    ctx.set('RateLimit-Policy', this.policy);
    ctx.set('RateLimit', `"merchant";r=${Math.floor(bucket.tokens)};t=${refillSeconds}`);
    if (allowed) return;
    const retryAfter = Math.max(1, Math.ceil((1 - bucket.tokens) / this.perSecond));
    ctx.set('Retry-After', String(retryAfter));
    throw new ProblemError(
      Problems.tooManyRequests,
      `Rate limit of ${this.burst} requests per ${Math.ceil(this.burst / this.perSecond)} seconds exceeded; retry in ${retryAfter} s.`,
    );
  }

  private refilled(key: string): Bucket {
    const now = this.now();
    const bucket = this.buckets.get(key) ?? { tokens: this.burst, updatedAt: now };
    bucket.tokens = Math.min(this.burst, bucket.tokens + ((now - bucket.updatedAt) / 1000) * this.perSecond);
    bucket.updatedAt = now;
    this.buckets.set(key, bucket);
    return bucket;
  }
}
