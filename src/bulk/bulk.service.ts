/**
 * Accepting a bulk request (docs/design.md §6): normalise and collapse the ids, keep the caller's
 * own subscriptions that are not cancelled (one query; a cancelled subscription never changes
 * again, so it is rejected now rather than skipped by a worker later), and store the request
 * with every accepted id in one document (one insert): a request is accepted whole or not at
 * all. Nothing is applied here; it is dispatched to the workers once the 202 has been sent.
 */
import type { components } from '../../generated/openapi.js';
import { nowTimestamp } from '../lib/clock.js';
import { uuidv7 } from '../lib/ids.js';
import type { Logger } from '../logger.js';
import { metrics } from '../observability/metrics.js';
import { currentTraceparent } from '../observability/tracing.js';

const traceOf = (traceparent: string | undefined) => (traceparent ? { traceparent } : {});
import type { SubscriptionsRepository } from '../subscriptions/subscriptions.repository.js';
import { commandOf, decide, type Operation } from '../subscriptions/subscriptions.rules.js';
import type { ScheduleRequest } from '../subscriptions/schedule.request.js';
import { chunkCountFor } from './bulk.chunks.js';
import type { BulkDispatcher } from './bulk.dispatcher.js';
import type { BulkRepository, Rejection } from './bulk.repository.js';

type BulkAcceptance = components['schemas']['BulkAcceptance'];

export class BulkService {
  private readonly log: Logger;

  constructor(
    private readonly subscriptions: SubscriptionsRepository,
    private readonly repository: BulkRepository,
    private readonly dispatcher: BulkDispatcher,
    log: Logger,
  ) {
    this.log = log.child({ component: 'bulk' });
  }

  /** The ids were checked against the spec at the edge: 1 to 3000 UUIDs; a schedule, against its rules. */
  async accept(merchantId: string, operation: Operation, subscriptionIds: readonly string[], schedule?: ScheduleRequest): Promise<BulkAcceptance> {
    const requestId = uuidv7();
    const unique = [...new Set(subscriptionIds.map((id) => id.toLowerCase()))];
    const statuses = await this.subscriptions.ownedStatuses(merchantId, unique);
    // The rules' answer for the command on each status: a cancelled subscription never changes again.
    const cancelled = (status: string) => decide({ status, pauseAt: null, resumeAt: null }, commandOf(operation, schedule)).outcome === 'cancelled';
    const accepted = unique.filter((id) => statuses.has(id) && !cancelled(statuses.get(id)!));
    const rejected = unique.flatMap((subscriptionId): Rejection[] => {
      const status = statuses.get(subscriptionId);
      if (status === undefined) return [{ subscriptionId, reason: 'not_found' }];
      return cancelled(status) ? [{ subscriptionId, reason: 'cancelled' }] : [];
    });
    const createdAt = nowTimestamp();
    try {
      await this.repository.insert({
        requestId,
        merchantId,
        operation,
        acceptedCount: accepted.length,
        rejected,
        chunkCount: chunkCountFor(accepted.length),
        createdAt,
        completedAt: accepted.length === 0 ? createdAt : null,
        ...(schedule ? { schedule } : {}),
        ...traceOf(currentTraceparent()),
        subscriptionIds: accepted,
      });
    } catch (error) {
      // The insert may have reached the database before the connection failed: take it back, so
      // that the error means nothing was accepted (unless the database is unreachable even for this).
      await this.repository.remove(merchantId, requestId).catch(() => undefined);
      throw error;
    }
    for (const subscriptionId of accepted) this.log.info({ requestId, subscriptionId, operation, outcome: 'queued' }, 'bulk command queued');
    metrics()?.bulkAccepted.labels(operation.toLowerCase()).inc();
    return { requestId, operation, acceptedCount: accepted.length, rejected };
  }

  /** Hands an accepted request to the workers; called once its 202 has been sent. */
  dispatch(merchantId: string, requestId: string): void {
    this.dispatcher.dispatchSoon(merchantId, requestId);
  }
}
