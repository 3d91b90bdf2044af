/**
 * Thin handlers keyed by operationId: read the typed request, call the service, set the
 * response. One path serves single and bulk operations, decided by the body (DESIGN.md §2).
 */
import type { Context } from 'openapi-backend';
import type { Context as KoaContext } from 'koa';
import type { components, operations } from '../../generated/openapi.js';
import { merchantOf, type OperationHandler } from '../http/openapi.js';
import type { SubscriptionsService } from './subscriptions.service.js';
import type { Operation, Subscription } from './subscriptions.rules.js';

type CommandRequest = components['schemas']['CommandRequest'];
type PausedSubscription = operations['pauseSubscription']['responses']['200']['content']['application/json'];
type ResumedSubscription = operations['resumeSubscription']['responses']['200']['content']['application/json'];
type BulkAcceptance = components['schemas']['BulkAcceptance'];

export interface BulkAcceptor {
  accept(merchantId: string, operation: Operation, subscriptionIds: readonly string[]): Promise<BulkAcceptance>;
  /** Hands the accepted request to the workers: called once the 202 is sent, so nothing is applied before it. */
  dispatch(requestId: string): void;
}

function pausedView(s: Subscription): PausedSubscription {
  const { id, merchantId, planId, status, cycle, createdAt, modifiedAt } = s;
  return { id, merchantId, planId, status, cycle, createdAt, modifiedAt };
}

function resumedView(s: Subscription): ResumedSubscription {
  const { id, planId, status, cycle, createdAt, modifiedAt } = s;
  return { id, planId, status, cycle, createdAt, modifiedAt };
}

function pathId(c: Context): string {
  const raw = String(c.request.params.subscriptionId);
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

export function subscriptionHandlers(
  subscriptions: SubscriptionsService,
  bulk: BulkAcceptor,
): Record<string, OperationHandler> {
  const handle =
    (operation: Operation, view: (s: Subscription) => PausedSubscription | ResumedSubscription): OperationHandler =>
    async (c: Context, ctx: KoaContext) => {
      const merchant = merchantOf(c);
      const body = (c.request.requestBody ?? {}) as CommandRequest;
      if (body.subscriptions !== undefined) {
        const acceptance = await bulk.accept(merchant.id, operation, body.subscriptions);
        ctx.status = 202;
        ctx.body = acceptance;
        ctx.res.once('close', () => bulk.dispatch(acceptance.requestId));
        return;
      }
      ctx.status = 200;
      ctx.body = view(await subscriptions.apply(merchant.id, pathId(c), operation));
    };
  return {
    pauseSubscription: handle('PAUSE', pausedView),
    resumeSubscription: handle('RESUME', resumedView),
  };
}
