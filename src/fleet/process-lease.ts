/**
 * One long-running process per database where the engine's conditional updates are not atomic
 * across processes (capabilities.atomicConditionalUpdate false). There, changes to one
 * subscription are serialised within a process only, so two processes lose each other's writes
 * (docs/engine.md); a `serve` or `worker` takes this lease before it composes anything, and a second
 * one on the same database refuses to start. ALLOW_SHARED_EMBEDDED=true lets it start anyway (tests
 * of fleet mechanics only); the CLI's one-shot commands take no lease.
 *
 * The lease is one document, renewed every HEARTBEAT_INTERVAL_MS and valid for as long as a
 * heartbeat is (STALE_INTERVALS intervals), so that a killed holder blocks the next start for that
 * long at most. A process that finds it held watches it: renewed meanwhile, its holder is alive and
 * the start is refused; expired unrenewed, it is taken over. Taking it is an insert of its fixed
 * `_id`, which the engine keeps unique, so of two processes starting at once exactly one wins.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Collection, Db } from 'mongodb';
import { isDuplicateKeyError } from '../db/mongo.js';
import { Periodic } from '../lib/periodic.js';
import type { Logger } from '../logger.js';
import { SharedDatabaseError } from './fleet.errors.js';
import { staleAfterMs, type ProcessRole } from './heartbeat.js';

export const LEASE_COLLECTION = 'processLease';
const LEASE_ID = 'one-process';
/** How often a starting process reads a lease it found held. */
const WATCH_EVERY_MS = 200;

interface LeaseDocument {
  _id: string;
  holder: string;
  role: ProcessRole;
  host: string;
  pid: number;
  renewedAt: Date;
  expiresAt: Date;
}

export class ProcessLease {
  private readonly holder = randomUUID();
  private readonly collection: Collection<LeaseDocument>;
  private readonly renewals: Periodic;
  private readonly log: Logger;

  constructor(
    db: Db,
    private readonly role: ProcessRole,
    private readonly intervalMs: number,
    log: Logger,
  ) {
    this.collection = db.collection<LeaseDocument>(LEASE_COLLECTION);
    this.log = log.child({ component: 'fleet' });
    this.renewals = new Periodic(() => this.renew(), {
      everyMs: intervalMs,
      jitter: 0,
      failed: (error) => this.log.warn({ err: error }, 'one-process lease not renewed; retried at the next'),
    });
  }

  /** Takes the lease, waiting out one its killed holder left; throws SharedDatabaseError while another process holds it. */
  async acquire(): Promise<void> {
    let seen: LeaseDocument | undefined;
    for (;;) {
      const now = new Date();
      const held = await this.collection.findOne({ _id: LEASE_ID });
      if (!held) {
        if (await this.insert(now)) break;
        continue;
      }
      if (held.expiresAt <= now) {
        // Expired as read: removed only if still exactly that, so a lease just taken by another is left.
        await this.collection.deleteOne({ _id: LEASE_ID, holder: held.holder, renewedAt: held.renewedAt });
        continue;
      }
      if (seen && (seen.holder !== held.holder || held.renewedAt > seen.renewedAt)) throw refusal(held);
      seen ??= held;
      await new Promise((resolve) => setTimeout(resolve, WATCH_EVERY_MS));
    }
    this.renewals.start();
  }

  /** Gives the lease up at a clean stop, so that the next process starts at once. */
  async release(): Promise<void> {
    await this.renewals.stop();
    await this.collection
      .deleteOne({ _id: LEASE_ID, holder: this.holder })
      .catch((error: unknown) => this.log.warn({ err: error }, 'could not give up the one-process lease; it expires by itself'));
  }

  private async insert(now: Date): Promise<boolean> {
    try {
      await this.collection.insertOne({
        _id: LEASE_ID,
        holder: this.holder,
        role: this.role,
        host: hostname(),
        pid: process.pid,
        renewedAt: now,
        expiresAt: this.expiryFrom(now),
      });
      return true;
    } catch (error) {
      if (isDuplicateKeyError(error)) return false;
      throw error;
    }
  }

  private async renew(): Promise<void> {
    const now = new Date();
    const result = await this.collection.updateOne(
      { _id: LEASE_ID, holder: this.holder },
      { $set: { renewedAt: now, expiresAt: this.expiryFrom(now) } },
    );
    // Only after this process went unheard for the whole lease (stopped in a debugger, starved): another may run beside it now.
    if (result.matchedCount === 0 && !(await this.insert(now)))
      this.log.error('the one-process lease was taken over while this process was unheard: stop this process or the other');
  }

  private expiryFrom(now: Date): Date {
    return new Date(now.getTime() + staleAfterMs(this.intervalMs));
  }
}

function refusal(held: LeaseDocument): SharedDatabaseError {
  return new SharedDatabaseError(
    `another ${held.role} process (pid ${held.pid} on ${held.host}) runs on this database, and its engine keeps changes atomic within one process only (docs/operations.md); set ALLOW_SHARED_EMBEDDED=true to start anyway, for tests of fleet mechanics only`,
  );
}
