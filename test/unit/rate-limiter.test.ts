/** The token bucket, on an injected clock: what each request is told, and when the 429 comes. */
import type { Context as KoaContext } from 'koa';
import { describe, expect, it } from 'vitest';
import { ProblemError } from '../../src/errors.js';
import { RateLimiter } from '../../src/http/rate-limit.js';

/** Koa's ctx.set, recorded: the only part of the context the limiter writes. */
function response() {
  const headers: Record<string, string> = {};
  return { headers, ctx: { set: (name: string, value: string) => (headers[name] = value) } as unknown as KoaContext };
}

function refusal(act: () => void): ProblemError {
  try {
    act();
  } catch (error) {
    if (error instanceof ProblemError) return error;
    throw error;
  }
  throw new Error('expected a 429');
}

describe('RateLimiter per merchant (burst 3, 1 per second)', () => {
  it('counts down r, refuses the fourth with 429 0060 and Retry-After 1, and refills with time', () => {
    let now = 0;
    const limiter = new RateLimiter(3, 1, { now: () => now });
    const left = [];
    for (let i = 0; i < 3; i++) {
      const { headers, ctx } = response();
      limiter.enforce('m1', ctx);
      expect(headers['RateLimit-Policy']).toBe('"merchant";q=3;w=3');
      left.push(headers.RateLimit);
    }
    expect(left).toEqual(['"merchant";r=2;t=1', '"merchant";r=1;t=2', '"merchant";r=0;t=3']);

    const { headers, ctx } = response();
    const error = refusal(() => limiter.enforce('m1', ctx));
    expect({ status: error.kind.status, code: error.kind.code, retryAfter: headers['Retry-After'] }).toEqual({
      status: 429,
      code: '0060',
      retryAfter: '1',
    });

    now += 500;
    expect(() => limiter.enforce('m1', response().ctx)).toThrow(ProblemError);
    now += 1_000;
    expect(() => limiter.enforce('m1', response().ctx)).not.toThrow();
  });

  it('keeps one bucket per key: another merchant is not affected', () => {
    const limiter = new RateLimiter(1, 1, { now: () => 0 });
    limiter.enforce('a', response().ctx);
    expect(() => limiter.enforce('a', response().ctx)).toThrow(ProblemError);
    expect(() => limiter.enforce('b', response().ctx)).not.toThrow();
  });

  it('never holds more than the burst, however long the key was idle', () => {
    let now = 0;
    const limiter = new RateLimiter(2, 1, { now: () => now });
    now = 3_600_000;
    const { headers, ctx } = response();
    limiter.enforce('m', ctx);
    expect(headers.RateLimit).toBe('"merchant";r=1;t=1');
  });
});

describe('RateLimiter per address, counting failures (3 a minute)', () => {
  it('takes a token per failure, refuses the fourth failure with 429 0060, and lets the address fail again after 20 s', () => {
    let now = 0;
    const limiter = new RateLimiter(3, 3 / 60, { scope: 'address', now: () => now });
    for (let i = 0; i < 3; i++) expect(() => limiter.fail('10.0.0.1', response().ctx)).not.toThrow();
    const { headers, ctx } = response();
    const error = refusal(() => limiter.fail('10.0.0.1', ctx));
    expect(error.kind.code).toBe('0060');
    expect(error.detail).toBe('Too many failed authentications from this address (3 requests per 60 seconds); retry in 20 s.');
    expect(headers['Retry-After']).toBe('20');
    expect(() => limiter.fail('10.0.0.2', response().ctx)).not.toThrow();
    now += 20_000;
    expect(() => limiter.fail('10.0.0.1', response().ctx)).not.toThrow();
    expect(() => limiter.fail('10.0.0.1', response().ctx)).toThrow(ProblemError);
  });
});

describe('RateLimiter shared by 2 HTTP processes (setShare(2); fleet limit burst 10, 2 per second)', () => {
  it('holds half the burst and half the refill; the fields speak of the fleet', () => {
    let now = 0;
    const limiter = new RateLimiter(10, 2, { now: () => now });
    limiter.setShare(2);
    const left = [];
    for (let i = 0; i < 5; i++) {
      const { headers, ctx } = response();
      limiter.enforce('m1', ctx);
      expect(headers['RateLimit-Policy']).toBe('"merchant";q=10;w=5');
      left.push(headers.RateLimit);
    }
    // r: this process's tokens times 2; t: seconds to a whole fleet quota at the fleet's rate.
    expect(left).toEqual(['"merchant";r=8;t=1', '"merchant";r=6;t=2', '"merchant";r=4;t=3', '"merchant";r=2;t=4', '"merchant";r=0;t=5']);
    const { headers, ctx } = response();
    refusal(() => limiter.enforce('m1', ctx));
    // One token refills in 1 s at this process's 1 per second.
    expect(headers['Retry-After']).toBe('1');
    now += 1000;
    limiter.enforce('m1', response().ctx);
    expect(() => limiter.enforce('m1', response().ctx)).toThrow(ProblemError);
  });

  it('with more processes than the burst, each keeps one request at once (never none)', () => {
    const limiter = new RateLimiter(3, 1, { now: () => 0 });
    limiter.setShare(4);
    limiter.enforce('m1', response().ctx);
    expect(() => limiter.enforce('m1', response().ctx)).toThrow(ProblemError);
  });

  it('a bucket above a smaller new share is cut to it at its next use', () => {
    const limiter = new RateLimiter(10, 1, { now: () => 0 });
    limiter.enforce('m1', response().ctx); // 9 left of the whole limit
    limiter.setShare(2);
    for (let i = 0; i < 5; i++) limiter.enforce('m1', response().ctx);
    expect(() => limiter.enforce('m1', response().ctx)).toThrow(ProblemError);
  });
});
