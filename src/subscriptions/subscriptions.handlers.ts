/**
 * Thin handlers keyed by operationId: read the typed request, call the service, set the
 * response. One path serves single and bulk operations, decided by the body (docs/design.md §2).
 */
import type { components, operations } from '../../generated/openapi.js';
import { selectionOf, type BulkAcceptor, type BulkSelection } from './bulk.selection.js';
import { livemodeOf } from '../merchants/livemode.js';
import { pageRequestOf, type Handlers, type Request } from '../request-context/request-context.js';
import { scheduleRequestOf, type ScheduleRequest } from './schedule.request.js';
import type { SubscriptionsService } from './subscriptions.service.js';
import { causeOf, type Operation, type Subscription } from './subscriptions.rules.js';

type CommandOperation = 'pauseSubscription' | 'resumeSubscription' | 'bulkPauseSubscriptions' | 'bulkResumeSubscriptions';

type PausedSubscription = operations['pauseSubscription']['responses']['200']['content']['application/json'];
type ResumedSubscription = operations['resumeSubscription']['responses']['200']['content']['application/json'];

/** The schedule and reason, only where set: a subscription without them looks as it always did. */
function scheduleView({ schedule, pauseReason }: Subscription): Pick<PausedSubscription, 'schedule' | 'pauseReason'> {
  return { ...(schedule ? { schedule } : {}), ...(pauseReason !== undefined ? { pauseReason } : {}) };
}

export function pausedView(s: Subscription): PausedSubscription {
  const { id, merchantId, planId, status, cycle, createdAt, modifiedAt } = s;
  return { id, merchantId, planId, status, cycle, createdAt, modifiedAt, ...scheduleView(s), livemode: livemodeOf(merchantId) };
}

/** A subscription as a read shows it: as the pause answer, with the holds that cover it, while one does. */
export function subscriptionView(s: Subscription): components['schemas']['Subscription'] {
  return {
    ...pausedView(s),
    ...(s.holdIds ? { holdIds: [...s.holdIds] } : {}),
    ...(s.externalId !== undefined ? { externalId: s.externalId } : {}),
    ...(s.metadata !== undefined ? { metadata: { ...s.metadata } } : {}),
  };
}

function resumedView(s: Subscription): ResumedSubscription {
  const { id, planId, status, cycle, createdAt, modifiedAt } = s;
  return { id, planId, status, cycle, createdAt, modifiedAt, ...scheduleView(s), livemode: livemodeOf(s.merchantId) };
}

/**
 * Pause and resume, single or bulk: the commands (the app makes them idempotent). A bulk request
 * is its own operation on `/bulk/pause` and `/bulk/resume`, and the body-based form on the
 * templated path is the same request (docs/design.md §2): both go through `acceptBulk`. A pause's
 * schedule is checked against the rules the schema cannot state (docs/design.md §9, 400 0043).
 */
export function subscriptionCommandHandlers(
  subscriptions: SubscriptionsService,
  bulk: BulkAcceptor,
): Pick<Handlers, 'pauseSubscription' | 'resumeSubscription' | 'bulkPauseSubscriptions' | 'bulkResumeSubscriptions'> {
  const acceptBulk = async (
    request: Request<CommandOperation>,
    operation: Operation,
    selection: BulkSelection,
    schedule: ScheduleRequest | undefined,
  ) => {
    const acceptance = await bulk.accept(request.merchant.id, operation, selection, schedule, request.merchant.apiKeyId);
    request.afterResponse(() => bulk.dispatch(request.merchant.id, acceptance.requestId));
    return { status: 202, body: acceptance, headers: { Location: `/v2/bulk-requests/${acceptance.requestId}` } } as const;
  };
  /** `/bulk/pause` and `/bulk/resume`: a list of ids or a filter, and a dry run of either (docs/design.md §6a). */
  const bulkOperation = async (
    request: Request<'bulkPauseSubscriptions'> | Request<'bulkResumeSubscriptions'>,
    operation: Operation,
    schedule: ScheduleRequest | undefined,
  ) => {
    const selection = selectionOf(request.body);
    if (request.body.dryRun) return { status: 200, body: await bulk.dryRun(request.merchant.id, operation, selection, schedule) } as const;
    return acceptBulk(request, operation, selection, schedule);
  };
  return {
    pauseSubscription: async (request) => {
      const clock = await subscriptions.clock(request.merchant.id);
      const schedule = scheduleRequestOf(request.body, clock);
      if (request.body.subscriptions) return acceptBulk(request, 'PAUSE', { ids: request.body.subscriptions }, schedule);
      return {
        status: 200,
        body: pausedView(
          await subscriptions.apply(request.merchant.id, request.params.subscriptionId, 'PAUSE', {
            schedule,
            cause: causeOf(request.merchant),
            clock,
          }),
        ),
      };
    },
    resumeSubscription: async (request) => {
      if (request.body.subscriptions) return acceptBulk(request, 'RESUME', { ids: request.body.subscriptions }, undefined);
      return {
        status: 200,
        body: resumedView(
          await subscriptions.apply(request.merchant.id, request.params.subscriptionId, 'RESUME', { cause: causeOf(request.merchant) }),
        ),
      };
    },
    bulkPauseSubscriptions: async (request) =>
      bulkOperation(request, 'PAUSE', scheduleRequestOf(request.body, await subscriptions.clock(request.merchant.id))),
    bulkResumeSubscriptions: async (request) => bulkOperation(request, 'RESUME', undefined),
  };
}

/** Reads: a subscription, and the merchant's list of them; and dropping a subscription's schedule. */
export function subscriptionReadHandlers(
  subscriptions: SubscriptionsService,
): Pick<Handlers, 'getSubscription' | 'listSubscriptions' | 'deleteSubscriptionSchedule'> {
  return {
    deleteSubscriptionSchedule: async ({ merchant, params }) => ({
      status: 200,
      body: pausedView(await subscriptions.dropSchedule(merchant.id, params.subscriptionId, causeOf(merchant))),
    }),
    getSubscription: async ({ merchant, params }) => ({
      status: 200,
      body: subscriptionView(await subscriptions.get(merchant.id, params.subscriptionId)),
    }),
    listSubscriptions: async ({ merchant, query }) => {
      const page = await subscriptions.list(merchant.id, query.status, pageRequestOf(query));
      return { status: 200, body: { ...page, data: page.data.map(subscriptionView) } };
    },
  };
}
