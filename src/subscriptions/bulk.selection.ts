/**
 * What a bulk request acts on (docs/design.md §6, §6a): a list of ids, or a filter on the caller's
 * subscriptions. The form was checked against the spec at the edge; here the filter's times are
 * normalised to the stored timestamps (docs/design.md §5), so that they compare as strings.
 */
import type { components } from '../../generated/openapi.js';
import { requestedTimestamp } from './schedule.request.js';
import type { ScheduleRequest } from './schedule.request.js';
import type { SubscriptionFilter } from './subscriptions.store.js';
import type { Operation } from './subscriptions.rules.js';

/** The most subscriptions one request by filter may match: part of the contract (400 0046 past it). */
export const MAX_FILTER_MATCHES = 100_000;
/** How many ids a dry run shows. */
export const DRY_RUN_SAMPLE = 20;

export type BulkSelection = { readonly ids: readonly string[] } | { readonly filter: SubscriptionFilter };

type BulkBody = Pick<components['schemas']['BulkCommandRequest'], 'subscriptions' | 'filter'>;

function timestampOf(field: 'createdBefore' | 'createdAfter', text: string | undefined): string | undefined {
  return text === undefined ? undefined : requestedTimestamp(`/filter/${field}`, text);
}

/** The selection a bulk body carries; the spec lets through exactly one of `subscriptions` and `filter`. */
export function selectionOf(body: BulkBody): BulkSelection {
  if (body.subscriptions) return { ids: body.subscriptions };
  const { status, planId, createdBefore, createdAfter } = body.filter ?? {};
  return {
    filter: {
      ...(status ? { statuses: status } : {}),
      ...(planId ? { planIds: [...new Set(planId.map((id) => id.toLowerCase()))] } : {}),
      ...(createdBefore !== undefined ? { createdBefore: timestampOf('createdBefore', createdBefore) } : {}),
      ...(createdAfter !== undefined ? { createdAfter: timestampOf('createdAfter', createdAfter) } : {}),
    },
  };
}

export interface BulkAcceptor {
  accept(
    merchantId: string,
    operation: Operation,
    selection: BulkSelection,
    schedule?: ScheduleRequest,
    apiKeyId?: string,
  ): Promise<components['schemas']['BulkAcceptance']>;
  /** What `accept` would take, with nothing stored (docs/design.md §6a). */
  dryRun(
    merchantId: string,
    operation: Operation,
    selection: BulkSelection,
    schedule?: ScheduleRequest,
  ): Promise<components['schemas']['BulkDryRun']>;
  /** Hands the accepted request to the workers: called once the 202 is sent, so nothing is applied before it. */
  dispatch(merchantId: string, requestId: string): void;
}
