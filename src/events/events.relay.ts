/**
 * Moves events from subscriptions' outboxes into the `events` collection and hands them to the
 * webhooks (fan-out), then takes them out of the outbox. Every step is safe to repeat: an event's
 * id comes from its outbox entry, stored events and deliveries are inserted by id (duplicates
 * ignored), and the entry leaves the outbox last. So a relay cut short anywhere, a process killed
 * with SIGKILL included, is simply done again: right after each change by the process that made
 * it, and by the sweep that worker processes run.
 */
import { currentTraceparent, inTraceContext } from '../observability/tracing.js';
import type { PerKeyQueue } from '../lib/keyed-mutex.js';
import { IdleSignal } from '../lib/idle-signal.js';
import { Periodic } from '../lib/periodic.js';
import { RETRY } from '../retry-policies.js';
import type { PendingEvents } from '../subscriptions/outbox.js';
import type { SubscriptionsService } from '../subscriptions/subscriptions.service.js';
import type { Logger } from '../logger.js';
import type { ImportView } from '../imports/imports.service.js';
import type { BulkRequestView } from '../bulk/bulk.status.js';
import { bulkRequestCompletedEvent, importCompletedEvent, eventTraces, subscriptionEvents } from './event.payload.js';
import type { Event } from './event.payload.js';
import type { EventsRepository } from './events.repository.js';

/** Where stored events go next: the webhook deliveries. Must be idempotent per event id. */
export interface EventSink {
  /**
   * Creates the events' deliveries and returns their ids. `held`: they are not queued for the
   * workers, because the caller makes their first attempts itself (sendFirst).
   */
  fanOut(merchantId: string, events: readonly Event[], traces?: ReadonlyMap<string, string>, held?: boolean): Promise<readonly string[]>;
  /** The first attempts of held deliveries, started within `withinMs`; what fails or is not started goes to the workers' queue. */
  sendFirst(merchantId: string, deliveryIds: readonly string[], withinMs: number): Promise<void>;
}

/**
 * The sweep is only for what a process killed between a change and its relay left behind: at start,
 * then this often. (A relay that fails in a live process is retried by that process, RETRY_MS later;
 * so is a sweep that fails.)
 * Rare, because where no index serves it a sweep reads every subscription, and frequent sweeps then
 * delay the due schedules (docs/engine.md#the-figures-behind-the-workarounds).
 */
const SWEEP_EVERY_MS = 5 * 60_000;
const RETRY_MS = RETRY.eventsRelay.delayMs;
const SWEEP_BATCH = 200;
/**
 * How long a relay after a change waits for others to join it: under load, fewer and larger batches
 * (each costs an event insert, an outbox clear, a deliveries insert and a delivery job, on any
 * engine), for an event up to this much later (docs/performance.md#the-figures-behind-the-codes-choices).
 */
const GATHER_MS = 50;

/** Work the relay waits out: whether some is under way, and a call once it may have ended. */
export interface WorkToWaitOut {
  busy(): boolean;
  onIdle(listener: () => void): void;
}

/**
 * What keeps a record of its own from events (the pause history, src/analytics/): told each batch
 * after it is stored and handed to the sink, and before its outboxes are cleared, so a crash
 * repeats it; it must be safe to repeat.
 */
export interface EventRecorder {
  record(merchantId: string, events: readonly Event[]): Promise<void>;
}

const NOTHING_TO_WAIT_OUT: WorkToWaitOut = { busy: () => false, onIdle: () => undefined };
/** How long a relay waits at most for this process's bulk work (so events are never starved by it). */
const DEFER_AT_MOST_MS = 30_000;

export class EventsRelay {
  private readonly log: Logger;
  /** The sweep of outboxes a stopped process left behind, in worker processes. */
  private readonly sweeps: Periodic;
  /**
   * Changed subscriptions whose outboxes the next relay takes, with their merchants, and where the
   * process that changed them handed them over, the entries their changes pushed (`held`): those
   * are relayed without reading the outbox back. Without `held`, the outbox is read.
   */
  private readonly waiting = new Map<string, { readonly merchantId: string; readonly held?: PendingEvents }>();
  private relaying: Promise<void> | undefined;
  /** Relays that failed, waiting RETRY_MS to be tried again. */
  private readonly retries = new Set<NodeJS.Timeout>();
  /** Set by stop(): the database clients close next, so nothing new is started. */
  private stopped = false;
  /** Woken when the work waited out may have ended, and at stop. */
  private readonly idleSignal = new IdleSignal();
  /** When stop() stops waiting for the relay under way (its deadline). */
  private stopBy = Infinity;

  constructor(
    private readonly repository: EventsRepository,
    /** Where the outboxes are. */
    private readonly outboxes: Pick<SubscriptionsService, 'outboxes' | 'clearOutboxes'>,
    private readonly sink: EventSink,
    log: Logger,
    /**
     * The process's per-subscription mutex, held while outboxes are cleared: where the engine's
     * conditional update is not atomic (keyedMutex), a clear beside a change of the same
     * subscription could write back the status it read (docs/design.md §8, "Conditional updates").
     */
    private readonly mutex: PerKeyQueue,
    /** Work this process is applying (bulk requests, due schedules), which the relay lets finish first (at most DEFER_AT_MOST_MS). */
    private readonly pauses: WorkToWaitOut = NOTHING_TO_WAIT_OUT,
    private readonly recorders: readonly EventRecorder[] = [],
  ) {
    this.log = log.child({ component: 'events' });
    pauses.onIdle(() => this.idleSignal.wake());
    this.sweeps = new Periodic(() => this.sweep(), {
      everyMs: SWEEP_EVERY_MS,
      atStart: true,
      // What a killed process left behind waits for the sweep alone: a failed sweep goes again soon.
      afterFailureMs: RETRY_MS,
      failed: (error) => this.log.warn({ err: error, retryInMs: RETRY_MS }, 'events sweep failed; tried again shortly'),
    });
  }

  /**
   * Relays the outboxes of these subscriptions (id → merchant), or for the sweep of any; returns
   * how many subscriptions had some. `sendWithinMs`: the first attempt of each delivery is made
   * here, after the outboxes are cleared, rather than by a worker (a test clock's advance answers
   * after its webhooks: docs/partners.md). `handed`: other subscriptions, with the entries to relay
   * as their changes handed them over (relaySoon): their outboxes are not read.
   */
  async relay(ids?: ReadonlyMap<string, string>, sendWithinMs?: number, handed: readonly PendingEvents[] = []): Promise<number> {
    const read = ids === undefined || ids.size > 0 ? await this.outboxes.outboxes(ids, ids?.size ?? SWEEP_BATCH) : [];
    const pending = handed.length > 0 ? [...handed, ...read] : read;
    const byMerchant = new Map<string, PendingEvents[]>();
    for (const waiting of pending) {
      const { merchantId } = waiting.subscription;
      const group = byMerchant.get(merchantId) ?? [];
      group.push(waiting);
      byMerchant.set(merchantId, group);
    }
    const held = new Map<string, readonly string[]>();
    for (const [merchantId, group] of byMerchant) {
      const events = group.flatMap(subscriptionEvents);
      held.set(merchantId, await this.emit(merchantId, events, eventTraces(group), sendWithinMs !== undefined));
      await this.mutex.runAll(
        group.map((p) => p.subscription.id),
        () => this.outboxes.clearOutboxes(group),
      );
      for (const event of events) this.log.info({ eventId: event.id, type: event.type }, 'event recorded');
    }
    // A process killed before these attempts leaves its held deliveries to the workers' sweep of overdue ones.
    if (sendWithinMs !== undefined)
      for (const [merchantId, deliveryIds] of held)
        if (deliveryIds.length > 0) await this.sink.sendFirst(merchantId, deliveryIds, sendWithinMs);
    return pending.length;
  }

  /**
   * After a change: relayed in the background, never delaying the answer; the sweep repeats what
   * fails. Changes arriving together are relayed together, one relay at a time per process, so
   * that under load the relay costs a few writes per batch, not per change, and does not crowd
   * out the requests.
   *
   * `held`: the changed documents with the entries their changes pushed (a request's change
   * answers with its document): relayed as they are, the relay reads nothing back. Only those
   * entries: older ones still in the outbox (a relay that failed) are a retry's or the sweep's,
   * which read the outbox; an id also waiting to be read, or told without `held`, is read.
   */
  relaySoon(merchantId: string, ids: readonly string[], held?: readonly PendingEvents[]): void {
    // Once stopped, what changes is left in its outbox for the sweep.
    if (this.stopped) return;
    const handed = new Map(held?.map((p) => [p.subscription.id, p]));
    for (const id of ids) {
      const now = handed.get(id);
      const before = this.waiting.get(id);
      if (!now || (before && !before.held)) this.waiting.set(id, { merchantId });
      // Two changes before the relay: both changes' entries, in order.
      else this.waiting.set(id, { merchantId, held: before?.held ? { ...now, entries: [...before.held.entries, ...now.entries] } : now });
    }
    this.relayWaitingSoon();
  }

  private relayWaitingSoon(): void {
    if (this.stopped) return;
    this.relaying ??= this.relayWaiting().finally(() => {
      this.relaying = undefined;
      if (this.waiting.size > 0) this.relayWaitingSoon();
    });
  }

  private async relayWaiting(): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, GATHER_MS));
    while (this.waiting.size > 0 && Date.now() < this.stopBy) {
      await this.idle();
      const taken = [...this.waiting].slice(0, SWEEP_BATCH * 2);
      const toRead = new Map<string, string>();
      const held: PendingEvents[] = [];
      for (const [id, waiting] of taken) {
        this.waiting.delete(id);
        if (waiting.held) held.push(waiting.held);
        else toRead.set(id, waiting.merchantId);
      }
      await this.relay(toRead, undefined, held).catch((error: unknown) => {
        this.log.warn({ err: error }, `events not relayed yet; retried in ${RETRY_MS} ms`);
        if (this.stopped) return;
        // Tried again by reading the outboxes: whatever this relay did not clear is still there.
        const retry = setTimeout(() => {
          this.retries.delete(retry);
          for (const [id, { merchantId }] of taken) this.waiting.set(id, { merchantId });
          this.relayWaitingSoon();
        }, RETRY_MS).unref();
        this.retries.add(retry);
      });
      // The next batch gathers for GATHER_MS too, counted from this relay's end: a relay of handed
      // entries reads nothing and is quick, and batches taken back to back are smaller, each with
      // its own events insert, outbox clear, deliveries and delivery job
      // (docs/performance.md#the-figures-behind-the-codes-choices).
      if (this.waiting.size > 0 && !this.stopped) await new Promise((resolve) => setTimeout(resolve, GATHER_MS));
    }
  }

  /**
   * Waits while this process applies a bulk request or due schedules, at most DEFER_AT_MOST_MS,
   * where the engine asks it (relayPauses): relayed between chunks, the events' writes queue with
   * the request's on its way to completion (docs/engine.md#the-figures-behind-the-workarounds).
   */
  private async idle(): Promise<void> {
    const until = Date.now() + DEFER_AT_MOST_MS;
    while (this.pauses.busy() && !this.stopped && Date.now() < until) await this.idleSignal.next(until - Date.now());
  }

  /**
   * Completed bulk requests' events (one write for all). Recorded by every chunk run that finds a
   * request completed, so a worker killed before recording it leaves it to the run that repeats
   * the chunk; its id comes from the request and its stored completion time, the same on every run.
   */
  async bulkCompleted(
    merchantId: string,
    views: readonly BulkRequestView[],
    traces?: ReadonlyMap<string, string | undefined>,
  ): Promise<void> {
    if (views.length === 0) return;
    const events = views.map((view) => bulkRequestCompletedEvent(merchantId, view));
    // Each one's deliveries continue the trace of the chunk that completed its request (`traces`, by
    // request id), or else of the run that completed it, when traced.
    const run = currentTraceparent();
    const traceOf = (i: number) => traces?.get(views[i]!.requestId) ?? run;
    const byEvent = new Map(events.flatMap((e, i) => (traceOf(i) ? [[e.id, traceOf(i)!] as const] : [])));
    await this.emit(merchantId, events, byEvent.size > 0 ? byEvent : undefined);
    events.forEach((event, i) =>
      inTraceContext(traceOf(i), () =>
        this.log.info({ eventId: event.id, type: 'bulk_request.completed', requestId: views[i]!.requestId }, 'event recorded'),
      ),
    );
  }

  /** An import's `subscription_import.completed`: recorded by the run that completed it (its id the same on every run). */
  async importCompleted(merchantId: string, view: ImportView): Promise<void> {
    const event = importCompletedEvent(merchantId, view);
    await this.emit(merchantId, [event]);
    this.log.info({ eventId: event.id, type: event.type, importId: view.id }, 'event recorded');
  }

  /** Events made outside a subscription's outbox (a push to the billing system that failed for good): stored, then sent as every event is. */
  async recordEvents(merchantId: string, events: readonly Event[]): Promise<void> {
    await this.emit(merchantId, events);
    for (const event of events) this.log.info({ eventId: event.id, type: event.type }, 'event recorded');
  }

  private async emit(
    merchantId: string,
    events: readonly Event[],
    traces?: ReadonlyMap<string, string>,
    held = false,
  ): Promise<readonly string[]> {
    await this.repository.insert(merchantId, events);
    // What leaves the service (webhooks, event destinations) goes before the service's own records,
    // which may take longer than the sending; all are repeated together if the relay is cut short.
    const deliveries = await this.sink.fanOut(merchantId, events, traces, held);
    for (const recorder of this.recorders) await recorder.record(merchantId, events);
    return deliveries;
  }

  /**
   * Worker processes sweep outboxes that a stopped process left behind: now, then every
   * SWEEP_EVERY_MS. A relay stopped before relays changes again from here (workers stopped and
   * started again), not only at the sweep.
   */
  start(): void {
    this.stopped = false;
    this.stopBy = Infinity;
    this.sweeps.start();
  }

  /**
   * Stops the sweep, relays what changed so far (at once, without waiting for bulk work) and
   * takes no more: this runs after the workers stopped and before the database clients close (a
   * relay left running failed on closed clients, as `npm run load` showed), within the deadline
   * (a relay on an unreachable database would wait for its operations' bound). What changes after,
   * fails now, or is not relayed by the deadline stays in its outbox for a worker's sweep.
   */
  async stop(deadlineMs: number): Promise<void> {
    this.stopped = true;
    this.stopBy = Date.now() + deadlineMs;
    this.idleSignal.wake();
    for (const retry of this.retries) clearTimeout(retry);
    this.retries.clear();
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<'deadline'>((resolve) => (timer = setTimeout(() => resolve('deadline'), deadlineMs)));
    const ended = await Promise.race([Promise.all([this.sweeps.stop(), this.relaying]), deadline]).finally(() => clearTimeout(timer));
    if (ended === 'deadline')
      this.log.warn('events relay still running at the shutdown deadline; what it has not relayed stays in outboxes for the sweep');
  }

  /** Relays outboxes SWEEP_BATCH subscriptions at a time, while a batch comes back full and the relay is not stopped. */
  private async sweep(): Promise<void> {
    for (let more = true; more && this.sweeps.running;) {
      await this.idle();
      more = (await this.relay()) === SWEEP_BATCH;
    }
  }
}
