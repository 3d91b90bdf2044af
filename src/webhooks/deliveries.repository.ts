/**
 * Every MongoDB call about webhook deliveries: one document per event and endpoint (and per
 * resend), with its attempts. `dueAt` is when a worker may take it: the next attempt's time, or,
 * while a worker holds it, the end of that worker's lease; null once it is finished.
 */
import { randomUUID } from 'node:crypto';
import type { Collection, Db } from 'mongodb';
import type { components } from '../../generated/openapi.js';
import { formatTimestamp } from '../lib/clock.js';
import { bulkWriteInParts, deleteInParts, insertNew, pageAlongIds } from '../db/mongo-helpers.js';
import { ensureTtlIndex } from '../db/retention.js';
import type { Page, PageRequest } from '../lib/pagination.js';
import { EVENT_RETENTION_MS } from '../events/events.repository.js';

export type WebhookDelivery = components['schemas']['WebhookDelivery'];
export type WebhookAttempt = components['schemas']['WebhookAttempt'];

/** A delivery as stored; `livemode` is its merchant's (the handler shows it). */
export interface Delivery extends Omit<WebhookDelivery, 'livemode' | 'replay'> {
  readonly merchantId: string;
  readonly endpointId: string;
  /** The trace context of the change that caused it (W3C traceparent), when traced: the delivery continues it. */
  readonly trace?: string;
  /** Set on a replay's deliveries only. */
  readonly replay?: true;
}

/** What one attempt (or a decision not to attempt) leaves of a delivery. */
export interface DeliveryUpdate {
  readonly id: string;
  readonly attempt: WebhookAttempt | undefined;
  readonly status: WebhookDelivery['status'];
  /** When to try again (status pending); undefined otherwise. */
  readonly retryAt?: Date;
}

interface DeliveryDocument extends Omit<Delivery, 'id'> {
  _id: string;
  dueAt: Date | null;
  claim?: string;
  expiresAt: Date;
}

const toDelivery = ({ _id, dueAt: _d, claim: _c, expiresAt: _e, ...rest }: DeliveryDocument): Delivery => ({ id: _id, ...rest });

export class DeliveriesRepository {
  private readonly collection: Collection<DeliveryDocument>;

  constructor(
    db: Db,
    /** At most this many statements per write command (src/db/workarounds.ts); undefined: one command. */
    private readonly statementsPerCommand?: number,
    /** Deletes in parts of at most this many documents (src/db/workarounds.ts); undefined: one statement. */
    private readonly documentsPerDelete?: number,
  ) {
    this.collection = db.collection<DeliveryDocument>('webhookDeliveries');
  }

  /**
   * The sweep of overdue deliveries reads through `pending_deliveries`, led by the status: pending
   * deliveries are few beside finished ones, and an equality on an index's first field is served
   * from the index even by an engine that serves no range from one
   * (docs/engine.md#what-is-not-pushed-down).
   */
  async ensureIndexes(ttlIndexes: boolean): Promise<void> {
    await ensureTtlIndex(this.collection, ttlIndexes);
    await Promise.all([
      this.collection.createIndex({ endpointId: 1, _id: -1 }, { name: 'endpoint_deliveries' }),
      this.collection.createIndex({ status: 1, dueAt: 1 }, { name: 'pending_deliveries' }),
    ]);
  }

  /** Creates the deliveries, due now; ones that exist already (a fan-out repeated) are left as they are. */
  async insert(deliveries: readonly Delivery[]): Promise<void> {
    const now = new Date();
    const expiresAt = new Date(now.getTime() + EVENT_RETENTION_MS);
    await insertNew(
      this.collection,
      deliveries.map(({ id, ...rest }) => ({ _id: id, ...rest, dueAt: now, expiresAt })),
    );
  }

  /**
   * Takes those of these deliveries that are due and held by no other worker, until `leaseUntil`:
   * one update and one read for the batch. A worker that dies holding some leaves them due again
   * when the lease ends.
   */
  async claim(merchantId: string, ids: readonly string[], leaseUntil: Date, now = new Date()): Promise<Delivery[]> {
    const claim = randomUUID();
    const these = { _id: { $in: [...ids] }, merchantId };
    await this.collection.updateMany({ ...these, status: 'pending', dueAt: { $lte: now } }, { $set: { dueAt: leaseUntil, claim } });
    return (await this.collection.find({ ...these, claim }).toArray()).map(toDelivery);
  }

  /** Pending deliveries due before `before` that no job took (their job was lost): for the sweep, through `pending_deliveries`. */
  async overdue(before: Date, limit: number): Promise<{ id: string; merchantId: string }[]> {
    const docs = await this.collection
      .find({ status: 'pending', dueAt: { $lt: before } }, { projection: { _id: 1, merchantId: 1 } })
      .limit(limit)
      .toArray();
    return docs.map((d) => ({ id: d._id, merchantId: d.merchantId }));
  }

  /** Records the batch's attempts and where each delivery stands now. */
  async record(merchantId: string, updates: readonly DeliveryUpdate[]): Promise<void> {
    await bulkWriteInParts(
      this.collection,
      updates.map(({ id, attempt, status, retryAt }) => ({
        updateOne: {
          filter: { _id: id, merchantId },
          update: {
            $set: { status, dueAt: retryAt ?? null, nextAttemptAt: retryAt ? formatDate(retryAt) : null },
            $unset: { claim: '' },
            ...(attempt ? { $push: { attempts: attempt } } : {}),
          },
        },
      })),
      this.statementsPerCommand,
    );
  }

  /** An endpoint's deliveries, newest event first (delivery ids start with the event's UUIDv7). */
  page(merchantId: string, endpointId: string, page: PageRequest): Promise<Page<Delivery>> {
    return pageAlongIds(this.collection, { merchantId, endpointId }, page, true, toDelivery);
  }

  /** Removes deliveries past their retention; where the server has TTL indexes they go by themselves. */
  async deleteExpired(now = new Date()): Promise<number> {
    return deleteInParts(this.collection, { expiresAt: { $lte: now } }, this.documentsPerDelete);
  }
}

const formatDate = (date: Date): string => formatTimestamp(BigInt(date.getTime()) * 1000n);
