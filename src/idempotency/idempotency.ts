/**
 * Idempotency-Key for every operation (IETF draft, Stripe's semantics): the same key and the same
 * request within 24 h replay the stored response with `Idempotent-Replayed: true` and do nothing
 * again; the same key with another request answers 422 (0050); while the first is being served,
 * 409 (0051). Only successful responses are stored: after an error the key is released; a
 * failure to store a successful response never turns it into an error.
 */
import { createHash } from 'node:crypto';
import type { Context } from 'openapi-backend';
import { merchantOf, operationOf, type OperationHandler, type OperationId } from '../request-context/request-context.js';
import type { Logger } from '../logger.js';
import { IdempotencyKeyInFlightError, IdempotencyKeyReusedError } from './idempotency.errors.js';
import type { IdempotencyRepository } from './idempotency.repository.js';

// Where src/http/problem.middleware.ts imports them from.

/**
 * What makes two requests "the same request": the operation, the body, and the subscription in the
 * path, except for bulk requests, whose path segment is ignored (docs/design.md §2): a retry of
 * `/bulk/pause` sent to `/{subscriptionId}/pause` with the same body is the same request.
 */
function fingerprint(c: Context): string {
  const { operationId, subscriptionId, bulkIds, body } = operationOf(c);
  // Ids are case-insensitive (docs/design.md §6): `/ABC…/pause` retried as `/abc…/pause` is the same request.
  const pathSegment = bulkIds === undefined ? (subscriptionId?.toLowerCase() ?? null) : null;
  const operation = SAME_REQUEST_AS[operationId] ?? operationId;
  return createHash('sha256')
    .update(JSON.stringify([operation, pathSegment, body]))
    .digest('hex');
}

/**
 * The bulk operations are fingerprinted as the body-based form on the templated path, which they
 * are the same request as: a key stored by either matches a retry through the other, and keys
 * stored before the bulk paths were operations of their own still replay.
 */
const SAME_REQUEST_AS: Partial<Record<OperationId, OperationId>> = {
  bulkPauseSubscriptions: 'pauseSubscription',
  bulkResumeSubscriptions: 'resumeSubscription',
};

export function idempotent(repository: IdempotencyRepository, log: Logger, handler: OperationHandler): OperationHandler {
  return async (c, ctx) => {
    // openapi-backend types a parsed request's headers as any.
    const raw = (c.request.headers as Record<string, string | string[] | undefined>)['idempotency-key'];
    const key = Array.isArray(raw) ? raw[0] : raw;
    if (!key) return handler(c, ctx);
    const merchantId = merchantOf(c).id;
    const claim = await repository.claim(merchantId, key, fingerprint(c));
    if (claim.kind === 'mismatch') {
      throw new IdempotencyKeyReusedError('This Idempotency-Key was used with a different request.');
    }
    if (claim.kind === 'in_flight') {
      throw new IdempotencyKeyInFlightError('A request with this Idempotency-Key is still being served; retry later.');
    }
    if (claim.kind === 'replay') {
      const { status, body, location } = claim.response;
      ctx.status = status;
      ctx.body = body;
      if (location) ctx.set('Location', location);
      ctx.set('Idempotent-Replayed', 'true');
      return;
    }
    try {
      await handler(c, ctx);
    } catch (error) {
      // Best effort: if the release fails too (the database is down), the claim is freed once
      // abandoned (60 s), and the client gets the first error, not the release's.
      await repository.release(merchantId, key).catch(() => undefined);
      throw error;
    }
    // The operation has succeeded: its answer stands even if storing it fails. The claim then
    // stays in flight until abandoned (60 s): a retry meanwhile gets 409 0051, later runs again,
    // which the operations' own idempotence makes harmless.
    const location = ctx.response.get('Location');
    await repository
      .complete(merchantId, key, { status: ctx.status, body: ctx.body, ...(location ? { location } : {}) })
      .catch((error: unknown) => {
        log.warn({ err: error }, 'the response of an Idempotency-Key request could not be stored; it will not be replayed');
      });
  };
}
