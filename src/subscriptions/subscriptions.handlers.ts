/**
 * Thin handlers keyed by operationId: read the typed request, call the service, set the
 * response. One path serves single and bulk operations, decided by the body (docs/design.md §2).
 */
import type { components, operations } from '../../generated/openapi.js';
import { nowMicros } from '../lib/clock.js';
import { operationOf, pageRequestOf, queryValue, type OperationContext, type OperationHandler, type OperationHandlers } from '../operations/operation-context.js';
import { scheduleRequestOf, type ScheduleRequest } from '../schedules/schedule.request.js';
import type { SchedulesService } from '../schedules/schedules.service.js';
import type { SubscriptionsService } from './subscriptions.service.js';
import type { Operation, Subscription, SubscriptionStatus } from './subscriptions.rules.js';

type PausedSubscription = operations['pauseSubscription']['responses']['200']['content']['application/json'];
type ResumedSubscription = operations['resumeSubscription']['responses']['200']['content']['application/json'];
type BulkAcceptance = components['schemas']['BulkAcceptance'];

export interface BulkAcceptor {
  accept(merchantId: string, operation: Operation, subscriptionIds: readonly string[], schedule?: ScheduleRequest): Promise<BulkAcceptance>;
  /** Hands the accepted request to the workers: called once the 202 is sent, so nothing is applied before it. */
  dispatch(merchantId: string, requestId: string): void;
}

/** The schedule and reason, only where set: a subscription without them looks as it always did. */
function scheduleView({ schedule, pauseReason }: Subscription): Pick<PausedSubscription, 'schedule' | 'pauseReason'> {
  return { ...(schedule ? { schedule } : {}), ...(pauseReason !== undefined ? { pauseReason } : {}) };
}

function pausedView(s: Subscription): PausedSubscription {
  const { id, merchantId, planId, status, cycle, createdAt, modifiedAt } = s;
  return { id, merchantId, planId, status, cycle, createdAt, modifiedAt, ...scheduleView(s) };
}

function resumedView(s: Subscription): ResumedSubscription {
  const { id, planId, status, cycle, createdAt, modifiedAt } = s;
  return { id, planId, status, cycle, createdAt, modifiedAt, ...scheduleView(s) };
}

/** A pause's schedule fields, checked against the rules of docs/design.md §9 (400 0043); never for a resume. */
function scheduleOf(operation: Operation, { body }: OperationContext): ScheduleRequest | undefined {
  return operation === 'PAUSE' ? scheduleRequestOf(body, nowMicros()) : undefined;
}

/**
 * Pause and resume, single or bulk: the commands (the app makes them idempotent). A bulk request
 * is its own operation on `/bulk/pause` and `/bulk/resume`, and the body-based form on the
 * templated path is the same request (docs/design.md §2): both go through `acceptBulk`.
 */
export function subscriptionCommandHandlers(
  subscriptions: SubscriptionsService,
  bulk: BulkAcceptor,
): Pick<OperationHandlers, 'pauseSubscription' | 'resumeSubscription' | 'bulkPauseSubscriptions' | 'bulkResumeSubscriptions'> {
  const acceptBulk =
    (operation: Operation): OperationHandler =>
    async (c, ctx) => {
      const context = operationOf(c);
      const acceptance = await bulk.accept(context.merchant.id, operation, context.bulkIds ?? [], scheduleOf(operation, context));
      ctx.status = 202;
      ctx.body = acceptance;
      ctx.set('Location', `/v2/bulk-requests/${acceptance.requestId}`);
      ctx.res.once('close', () => bulk.dispatch(context.merchant.id, acceptance.requestId));
    };
  const handle = (operation: Operation, view: (s: Subscription) => PausedSubscription | ResumedSubscription): OperationHandler => {
    const bulkHandler = acceptBulk(operation);
    return async (c, ctx) => {
      const context = operationOf(c);
      if (context.bulkIds !== undefined) return bulkHandler(c, ctx);
      const schedule = scheduleOf(operation, context);
      ctx.status = 200;
      ctx.body = view(await subscriptions.apply(context.merchant.id, String(context.subscriptionId), operation, schedule));
    };
  };
  return {
    pauseSubscription: handle('PAUSE', pausedView),
    resumeSubscription: handle('RESUME', resumedView),
    bulkPauseSubscriptions: acceptBulk('PAUSE'),
    bulkResumeSubscriptions: acceptBulk('RESUME'),
  };
}

/** Reads: a subscription, and the merchant's list of them; and dropping a subscription's schedule. */
export function subscriptionReadHandlers(
  subscriptions: SubscriptionsService,
  schedules: SchedulesService,
): Pick<OperationHandlers, 'getSubscription' | 'listSubscriptions' | 'deleteSubscriptionSchedule'> {
  return {
    deleteSubscriptionSchedule: async (c, ctx) => {
      const { merchant, subscriptionId } = operationOf(c);
      ctx.body = pausedView(await schedules.drop(merchant.id, String(subscriptionId)));
    },
    getSubscription: async (c, ctx) => {
      const { merchant, subscriptionId } = operationOf(c);
      ctx.body = pausedView(await subscriptions.get(merchant.id, String(subscriptionId)));
    },
    listSubscriptions: async (c, ctx) => {
      const context = operationOf(c);
      const status = queryValue(context, 'status') as SubscriptionStatus | undefined;
      const page = await subscriptions.list(context.merchant.id, status, pageRequestOf(context));
      ctx.body = { ...page, data: page.data.map(pausedView) };
    },
  };
}
