/**
 * How a forced failure (src/test-mode/test-outcomes.ts) is answered: with the problem, status and
 * headers the real failure has, so that a client cannot tell them apart.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Context as KoaContext } from 'koa';
import type { Context } from 'openapi-backend';
import { Problems, ProblemError } from '../errors.js';
import { PausePolicyError } from '../pause-policy/pause-policy.errors.js';
import { InvalidTransitionError, SubscriptionNotFoundError } from '../subscriptions/subscriptions.errors.js';
import type { Scenario } from '../test-mode/test-outcomes.js';

/** How long `timeout` holds the answer by default: past the 30 s most clients and proxies wait. */
export const TIMEOUT_HOLD_MS = 35_000;

function subscriptionIdOf(c: Context): string | undefined {
  const id = (c.request.params as Record<string, string | undefined>).subscriptionId;
  return id === undefined || id === '{subscriptionId}' || id === 'bulk' ? undefined : id;
}

function rateLimited(ctx: KoaContext): never {
  ctx.set('Retry-After', '1');
  // The policy the real limiter reported for this merchant stays; only the tokens left are forced to none.
  if (!ctx.response.get('RateLimit-Policy')) ctx.set('RateLimit-Policy', '"merchant";q=1;w=1');
  ctx.set('RateLimit', '"merchant";r=0;t=1');
  throw new ProblemError(Problems.tooManyRequests, 'Rate limit exceeded; retry in 1 s.');
}

function conflict(c: Context, id: string | undefined): never {
  if (id === undefined) throw new ProblemError(Problems.invalidStatusTransition, 'The subscription is cancelled and cannot change.');
  const operation = c.operation.operationId === 'resumeSubscription' ? 'RESUME' : 'PAUSE';
  throw new InvalidTransitionError(id, 'cancelled', operation);
}

function policyRefused(id: string | undefined): never {
  const detail = 'maxPauseDays is 30; this pause would last 90 days.';
  if (id === undefined) throw new ProblemError(Problems.pausePolicyViolated, detail);
  throw new PausePolicyError(id, { rule: 'maxPauseDays', detail });
}

/** Holds the answer, then 504; a client that hangs up first ends the hold. */
async function timedOut(ctx: KoaContext, holdMs: number): Promise<never> {
  const gone = new AbortController();
  const hungUp = (): void => gone.abort();
  ctx.req.once('close', hungUp);
  try {
    await sleep(holdMs, undefined, { signal: gone.signal }).catch(() => undefined);
  } finally {
    ctx.req.off('close', hungUp);
  }
  throw new ProblemError(Problems.gatewayTimeout, 'The request was not answered in time; retry with the same Idempotency-Key.');
}

/** Throws the scenario's problem (after holding it, for `timeout`). */
export async function answerAs(scenario: Scenario, c: Context, ctx: KoaContext, holdMs = TIMEOUT_HOLD_MS): Promise<never> {
  const id = subscriptionIdOf(c);
  switch (scenario.name) {
    case 'rate_limited':
      return rateLimited(ctx);
    case 'unavailable':
      throw new ProblemError(Problems.unavailable, 'The database is unavailable; retry later.');
    case 'timeout':
      return timedOut(ctx, holdMs);
    case 'conflict':
      return conflict(c, id);
    case 'policy_refused':
      return policyRefused(id);
    case 'not_found':
      throw id === undefined
        ? new ProblemError(Problems.subscriptionNotFound, 'Subscription not found')
        : new SubscriptionNotFoundError(id);
  }
}
