/**
 * Undoing a bulk request (docs/api.md, "Undo a bulk request"): a new bulk request of the opposite
 * operation over what the original changed (its items `applied`), less what changed since, stored
 * and dispatched as any request by ids is (BulkService.acceptChosen). A request is undone at most
 * once: the undo's id is set on it by one conditional update before the undo is stored.
 */
import type { components } from '../../generated/openapi.js';
import { uuidv7 } from '../lib/ids.js';
import { livemodeOf } from '../merchants/livemode.js';
import type { Operation } from '../subscriptions/subscriptions.rules.js';
import type { BulkRepository, BulkRequest, ItemOutcome, Rejection } from './bulk.repository.js';
import type { BulkService } from './bulk.service.js';
import { BulkRequestAlreadyUndoneError, BulkRequestNotFinishedError, BulkRequestNotFoundError } from './bulk.errors.js';
import type { Owned, SubscriptionsService } from '../subscriptions/subscriptions.service.js';

type BulkUndoAcceptance = components['schemas']['BulkUndoAcceptance'];

const OPPOSITE: Record<Operation, Operation> = { PAUSE: 'RESUME', RESUME: 'PAUSE' };
/** The status an applied command left a subscription in. */
const LEFT_IN: Record<Operation, Owned['status']> = { PAUSE: 'paused', RESUME: 'fulfilled' };

/**
 * Why an item the original applied is not undone: gone, cancelled, or changed since (its status is
 * not the one the original left, or it was modified after the original's item was recorded).
 */
function rejectionOf(operation: Operation, item: ItemOutcome, now: Owned | undefined): Rejection | undefined {
  const { subscriptionId } = item;
  if (now === undefined) return { subscriptionId, reason: 'not_found' };
  if (now.status === 'cancelled') return { subscriptionId, reason: 'cancelled' };
  if (now.status !== LEFT_IN[operation] || (now.modifiedAt ?? '') > item.at) return { subscriptionId, reason: 'changed_since' };
  return undefined;
}

export class BulkUndoService {
  constructor(
    private readonly requests: BulkRepository,
    private readonly subscriptions: Pick<SubscriptionsService, 'ownedStatuses'>,
    private readonly bulk: Pick<BulkService, 'acceptChosen'>,
  ) {}

  async undo(merchantId: string, requestId: string, apiKeyId?: string): Promise<BulkUndoAcceptance> {
    const original = await this.requests.find(merchantId, requestId.toLowerCase());
    if (!original) throw new BulkRequestNotFoundError(requestId);
    // A hold's pause and release are undone together, by releasing the hold: an undo of one alone would leave its holders wrong.
    if (original.holdId)
      throw new BulkRequestAlreadyUndoneError(
        `Bulk request ${original.requestId} is hold ${original.holdId}'s; release the hold (POST /v2/holds/${original.holdId}/release) instead.`,
      );
    if (original.undoneBy) throw this.alreadyUndone(original.requestId, original.undoneBy);
    const applied = await this.appliedItems(original);
    const states = await this.subscriptions.ownedStatuses(
      merchantId,
      applied.map((item) => item.subscriptionId),
    );
    const verdicts = applied.map((item) => ({ item, rejection: rejectionOf(original.operation, item, states.get(item.subscriptionId)) }));
    const kept = verdicts.filter((v) => v.rejection === undefined);
    const accepted = kept.map((v) => v.item.subscriptionId);
    // A change after this check stamps a later modifiedAt: the undo's commands skip it (changed_since).
    const unchangedSince = kept.reduce((latest, v) => (v.item.at > latest ? v.item.at : latest), '');
    const rejected = verdicts.flatMap((v) => (v.rejection ? [v.rejection] : []));
    const undo = uuidv7();
    if (!(await this.requests.claimUndo(merchantId, original.requestId, undo)))
      throw this.alreadyUndone(original.requestId, (await this.requests.find(merchantId, original.requestId))?.undoneBy);
    const operation = OPPOSITE[original.operation];
    try {
      await this.bulk.acceptChosen({
        requestId: undo,
        merchantId,
        operation,
        accepted,
        rejected,
        apiKeyId,
        undoes: original.requestId,
        ...(unchangedSince ? { unchangedSince } : {}),
      });
    } catch (error) {
      await this.requests.releaseUndo(merchantId, original.requestId, undo).catch(() => undefined);
      throw error;
    }
    return {
      requestId: undo,
      operation,
      acceptedCount: accepted.length,
      rejected: rejected as BulkUndoAcceptance['rejected'],
      undoes: original.requestId,
      livemode: livemodeOf(merchantId),
    };
  }

  /** The items the request applied, once every one of its commands has an outcome; 409 0033 before. */
  private async appliedItems(request: BulkRequest): Promise<ItemOutcome[]> {
    const chunks = await this.requests.chunksOf(request.merchantId, [request]);
    const items = chunks.flatMap((chunk) => chunk.outcomes ?? []);
    if (items.length < request.acceptedCount)
      throw new BulkRequestNotFinishedError(`Bulk request ${request.requestId} is not completed yet; undo it once it is.`);
    return items.filter((item) => item.outcome === 'applied');
  }

  private alreadyUndone(requestId: string, undoneBy: string | undefined): BulkRequestAlreadyUndoneError {
    const by = undoneBy ? `, by bulk request ${undoneBy}` : '';
    return new BulkRequestAlreadyUndoneError(`Bulk request ${requestId} is undone already${by}.`);
  }
}
