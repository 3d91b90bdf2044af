/**
 * Accepting a bulk request (docs/design.md §6, §6a): find what it selects among the caller's own
 * subscriptions (the listed ids, normalised and collapsed, or those a filter matches: one query
 * either way), keep those that are not cancelled (a cancelled subscription never changes again,
 * so it is rejected now rather than skipped by a worker later), and store the request with every
 * accepted id in one document (one insert): a request is accepted whole or not at all, and a
 * filter's matches are fixed there. Nothing is applied here; it is dispatched to the workers once
 * the 202 has been sent. A dry run does the same reading and stores nothing.
 */
import type { components } from '../../generated/openapi.js';
import { isDuplicateKeyError } from '../db/mongo.js';
import { FilterTooBroadError } from './bulk.errors.js';
import { nowTimestamp } from '../lib/clock.js';
import { uuidv7 } from '../lib/ids.js';
import { livemodeOf } from '../merchants/livemode.js';
import type { Logger } from '../logger.js';
import { metrics } from '../observability/metrics.js';
import { currentTraceparent } from '../observability/tracing.js';
import type { SubscriptionsService, TimeOf } from '../subscriptions/subscriptions.service.js';
import {
  isPolicyOff,
  NO_PAUSE_POLICIES,
  NO_PAUSE_POLICY,
  pauseVerdict,
  POLICY_REJECTIONS,
  readsHistory,
  type PauseHistory,
  type PausePolicy,
  type PausePolicySource,
} from '../pause-policy/pause-policy.rules.js';
import { commandOf, decide, type Operation } from '../subscriptions/subscriptions.rules.js';
import type { ScheduleRequest } from '../subscriptions/schedule.request.js';
import { chunkCountFor } from './bulk.chunks.js';
import type { BulkDispatcher } from './bulk.dispatcher.js';
import type { BulkRepository, BulkRequest, Rejection } from './bulk.repository.js';
import { DRY_RUN_SAMPLE, MAX_FILTER_MATCHES, type BulkSelection } from '../subscriptions/bulk.selection.js';

/** The most ids a request by ids lists (docs/design.md §6). */
const MAX_BULK_IDS = 3000;

type BulkAcceptance = components['schemas']['BulkAcceptance'];
type BulkDryRun = components['schemas']['BulkDryRun'];

type RequestRejection = components['schemas']['RejectedSubscription'];

/** A request to store: its ids accepted and rejected already decided. */
export interface ChosenRequest {
  readonly requestId: string;
  readonly merchantId: string;
  readonly operation: Operation;
  readonly accepted: readonly string[];
  readonly rejected: readonly Rejection[];
  readonly schedule?: ScheduleRequest | undefined;
  readonly apiKeyId?: string | undefined;
  /** The request an undo undoes. */
  readonly undoes?: string;
  /** An undo's bound on modifiedAt (BulkRequest.unchangedSince). */
  readonly unchangedSince?: string;
  /** The hold whose pause or release this is (src/holds/). */
  readonly holdId?: string;
}

const traceOf = (traceparent: string | undefined) => (traceparent ? { traceparent } : {});

/**
 * What a request selects, in order: each id with its status (and its PauseHistory, when a
 * pause policy reads it), or no status for a listed id that is not one of the caller's subscriptions.
 */
type Selected = readonly ({ readonly id: string; readonly status: string | undefined } & Partial<PauseHistory>)[];

/**
 * Why the command cannot take a selected subscription, by the rules' answer: not the caller's,
 * cancelled (it never changes again), or a pause that breaks the merchant's pause policy (the rule, docs/design.md §11).
 */
function rejectionFor(operation: Operation, schedule: ScheduleRequest | undefined, policy: PausePolicy, now: string) {
  const command = commandOf(operation, schedule);
  return ({ id, status, recentPauses = [], lastResumedAt }: Selected[number]): RequestRejection[] => {
    if (status === undefined) return [{ subscriptionId: id, reason: 'not_found' }];
    if (decide({ status, pauseAt: null, resumeAt: null }, command).outcome === 'cancelled')
      return [{ subscriptionId: id, reason: 'cancelled' }];
    if (operation !== 'PAUSE' || isPolicyOff(policy)) return [];
    const verdict = pauseVerdict(policy, status, schedule, { recentPauses, lastResumedAt }, now);
    return 'breach' in verdict ? [{ subscriptionId: id, reason: POLICY_REJECTIONS[verdict.breach.rule] }] : [];
  };
}

/** Where a request's reads and its insert go: a filter's, on the background client (below). */
export interface BulkStores {
  readonly subscriptions: Pick<SubscriptionsService, 'ownedStatuses' | 'matching'>;
  readonly requests: BulkRepository;
}

export class BulkService {
  private readonly log: Logger;
  /** Requests accepted here whose 202 is not sent yet, with their ids: `dispatch` takes them from here rather than reading them back. */
  private readonly accepted = new Map<string, BulkRequest>();

  constructor(
    private readonly byIds: BulkStores,
    /**
     * For requests by filter: up to 100,000 matches read and stored in one document take longer
     * than DB_TIMEOUT_MS allows a request (without a secondary index, every subscription), so
     * they are bounded by BULK_DB_TIMEOUT_MS, as the dispatch that follows is (docs/design.md §6a).
     */
    private readonly byFilter: BulkStores,
    private readonly dispatcher: BulkDispatcher,
    log: Logger,
    /** Each merchant's pause policy (src/pause-policy/), applied to a bulk pause at acceptance. */
    private readonly policies: PausePolicySource = NO_PAUSE_POLICIES,
    /** The time of the merchant's data, which its pause policy is decided at: a test mode's is its test clock's (src/test-mode/). */
    private readonly timeOf: TimeOf = () => nowTimestamp(),
  ) {
    this.log = log.child({ component: 'bulk' });
  }

  /** The selection was checked against the spec at the edge (1 to 3000 UUIDs, or a filter); a schedule, against its rules. */
  async accept(
    merchantId: string,
    operation: Operation,
    selection: BulkSelection,
    schedule?: ScheduleRequest,
    apiKeyId?: string,
  ): Promise<BulkAcceptance> {
    const policy = await this.policyFor(merchantId, operation);
    const selected = await this.select(merchantId, selection, readsHistory(policy));
    const rejection = rejectionFor(operation, schedule, policy, await this.timeOf(merchantId));
    const accepted = selected.filter((s) => rejection(s).length === 0).map((s) => s.id);
    const rejected = selected.flatMap(rejection);
    const { requests } = 'ids' in selection ? this.byIds : this.byFilter;
    const request = await this.store(requests, { requestId: uuidv7(), merchantId, operation, accepted, rejected, schedule, apiKeyId });
    return { requestId: request.requestId, operation, acceptedCount: accepted.length, rejected, livemode: livemodeOf(merchantId) };
  }

  /**
   * Stores a request whose ids the caller chose (an undo's: src/bulk/bulk.undo.ts; a hold's: src/holds/) as `accept`
   * stores its own, dispatched the same way once its 202 is sent.
   */
  async acceptChosen(chosen: ChosenRequest): Promise<BulkRequest> {
    // More ids than a request by ids takes (a hold's, over a whole store) are stored as a filter's are, on the background client.
    return this.store(chosen.accepted.length > MAX_BULK_IDS ? this.byFilter.requests : this.byIds.requests, chosen);
  }

  private async store(
    requests: BulkRepository,
    { requestId, merchantId, operation, accepted, rejected, schedule, apiKeyId, undoes, unchangedSince, holdId }: ChosenRequest,
  ): Promise<BulkRequest> {
    const createdAt = nowTimestamp();
    const request: BulkRequest = {
      requestId,
      merchantId,
      operation,
      acceptedCount: accepted.length,
      rejected,
      chunkCount: chunkCountFor(accepted.length),
      createdAt,
      completedAt: accepted.length === 0 ? createdAt : null,
      ...(schedule ? { schedule } : {}),
      ...(apiKeyId ? { apiKeyId } : {}),
      ...(undoes ? { undoes } : {}),
      ...(unchangedSince ? { unchangedSince } : {}),
      ...(holdId ? { holdId } : {}),
      ...traceOf(currentTraceparent()),
      subscriptionIds: accepted,
    };
    try {
      await requests.insert(request);
    } catch (error) {
      // Its id is taken: another process stored this very request (a hold's release, finished twice); it is not ours to take back.
      if (isDuplicateKeyError(error)) throw error;
      // The insert may have reached the database before the connection failed: take it back, so
      // that the error means nothing was accepted (unless the database is unreachable even for this).
      await requests.remove(merchantId, requestId).catch(() => undefined);
      throw error;
    }
    for (const subscriptionId of accepted)
      this.log.info({ requestId, subscriptionId, operation, outcome: 'queued' }, 'bulk command queued');
    metrics()?.bulkAccepted.labels(operation.toLowerCase()).inc();
    if (accepted.length > 0) this.accepted.set(requestId, request);
    return request;
  }

  /** What `accept` would take, read the same way, with nothing stored or queued. */
  async dryRun(merchantId: string, operation: Operation, selection: BulkSelection, schedule?: ScheduleRequest): Promise<BulkDryRun> {
    const policy = await this.policyFor(merchantId, operation);
    const matched = (await this.select(merchantId, selection, readsHistory(policy))).filter((s) => s.status !== undefined);
    const rejection = rejectionFor(operation, schedule, policy, await this.timeOf(merchantId));
    const reasons = matched.map((s) => rejection(s)[0]?.reason);
    const cancelledCount = reasons.filter((r) => r === 'cancelled').length;
    const acceptable = matched.filter((_, i) => reasons[i] === undefined).map((s) => s.id);
    return {
      matchedCount: matched.length,
      cancelledCount,
      policyRejectedCount: matched.length - cancelledCount - acceptable.length,
      sample: acceptable.slice(0, DRY_RUN_SAMPLE),
      livemode: livemodeOf(merchantId),
    };
  }

  /** The merchant's pause policy for a pause; none for a resume. */
  private policyFor(merchantId: string, operation: Operation): Promise<PausePolicy> {
    return operation === 'PAUSE' ? this.policies.policyOf(merchantId) : Promise.resolve(NO_PAUSE_POLICY);
  }

  /**
   * One read: the listed ids in the order sent (with no status where one is not the caller's), or
   * the caller's subscriptions the filter matches, in id order. A filter matching more than
   * MAX_FILTER_MATCHES is refused before anything is stored, from the same read capped one past
   * the limit: counting every match of a broad filter can outlast the database's time limit, and
   * the answer would be the same refusal.
   */
  private async select(merchantId: string, selection: BulkSelection, withHistory: boolean): Promise<Selected> {
    if ('ids' in selection) {
      const unique = [...new Set(selection.ids.map((id) => id.toLowerCase()))];
      const owned = await this.byIds.subscriptions.ownedStatuses(merchantId, unique, withHistory);
      return unique.map((id) => ({ ...owned.get(id), id, status: owned.get(id)?.status }));
    }
    const { subscriptions } = this.byFilter;
    const matched = await subscriptions.matching(merchantId, selection.filter, MAX_FILTER_MATCHES + 1, withHistory);
    if (matched.length > MAX_FILTER_MATCHES) {
      const limit = MAX_FILTER_MATCHES.toLocaleString('en-US');
      throw new FilterTooBroadError(
        `The filter matches more than ${limit} subscriptions; a bulk request takes at most ${limit}. Narrow the filter.`,
      );
    }
    return matched.sort((a, b) => (a.id < b.id ? -1 : 1));
  }

  /** Every id a request chose accepted (a hold's pause, which its release names too); undefined when it is not stored. */
  async acceptedIds(merchantId: string, requestId: string): Promise<string[] | undefined> {
    const { requests } = this.byFilter;
    // In its document until dispatched, then in its chunks (inserted before the document drops them).
    const undispatched = await requests.findUndispatched(merchantId, requestId);
    if (undispatched?.subscriptionIds) return [...undispatched.subscriptionIds];
    const request = await requests.find(merchantId, requestId);
    return request && (await requests.chunksOf(merchantId, [request])).flatMap((c) => c.subscriptionIds);
  }

  /** Hands an accepted request to the workers; called once its 202 has been sent. */
  dispatch(merchantId: string, requestId: string): void {
    const request = this.accepted.get(requestId);
    this.accepted.delete(requestId);
    this.dispatcher.dispatchSoon(merchantId, requestId, request?.merchantId === merchantId ? request : undefined);
  }
}
