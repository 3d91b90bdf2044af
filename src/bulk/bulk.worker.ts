/**
 * The consumer side of bulk commands, another entry point beside the HTTP handlers: takes chunk
 * jobs from the queue and applies them through the same service the handlers call.
 *
 * The one rule (docs/design.md §6): a command takes effect at most once, whatever runs twice.
 * The change and its mark are one update of the subscription's own document, and a chunk's
 * outcomes are recorded once, by the first run that finishes it. So a chunk run again (its
 * worker was killed, its lock expired, two workers took it at once) changes nothing and counts
 * nothing twice, and never undoes a change made after its command was applied.
 */
import { nowTimestamp } from '../lib/clock.js';
import type { Logger } from '../logger.js';
import { metrics } from '../observability/metrics.js';
import { currentTraceparent, inSpan, inTraceContext } from '../observability/tracing.js';
import type { CommandOutcome } from '../subscriptions/bulk-commands.rules.js';
import { KEPT_CHANGING, type SubscriptionsService } from '../subscriptions/subscriptions.service.js';
import type { ChangeCause } from '../subscriptions/subscriptions.rules.js';
import { CHUNK_SIZE, type ChunkJobData } from './bulk.chunks.js';
import type { BulkDispatcher } from './bulk.dispatcher.js';
import type { LockedJobs } from '../db/job-queue.js';
import type { BulkQueue, ChunkHandlers } from './bulk.queue.js';
import type { BulkChunk, BulkRepository, ItemOutcome } from './bulk.repository.js';

const SWEEP_EVERY_MS = 5_000;
/**
 * Commands one run applies at most, its own chunk's and its companions': ten full chunks. What a
 * run costs beside its chunks' updates (its job's lock, start, completion and removal, the lock
 * of its companions, one outcomes write per 16 chunks, one finished insert, one count and one
 * completion per request: about 11 commands, 60–80 ms on FerretDB) is then shared by up to ten
 * chunks of a 3000-id request, or 50 chunks of 20 commands under load, not one (docs/design.md §6).
 * With five (until 2026-11-25) a 3000-id request paid it six times, about a fifth of its drain
 * beside the raw updates. Larger, a run would hold the one slot a process has on FerretDB longer
 * (ten chunks of 100: about 0.5–1 s) before other merchants' chunks get it.
 */
export const RUN_COMMANDS = 10 * CHUNK_SIZE;
/**
 * Commands a run applies at most when it takes more companions while no other merchant's or
 * operation's chunk is due (`more`): a 3000-id request alone is then applied in two runs (its first
 * chunk's and the one Agenda locked ahead of it), not three. Bounds what a run killed repeats.
 */
export const EXTENDED_RUN_COMMANDS = 5 * RUN_COMMANDS;
/** A chunk that ended this recently is taken as one of a request still being applied. */
const BETWEEN_CHUNKS_MS = 250;

/** What a chunk's changes record as their cause: its request, and the API key that sent it, or the hold whose request it is. */
const causeOf = (chunk: BulkChunk): ChangeCause =>
  chunk.holdId
    ? { kind: 'hold', holdId: chunk.holdId, requestId: chunk.requestId }
    : { kind: 'bulk', requestId: chunk.requestId, ...(chunk.apiKeyId ? { apiKeyId: chunk.apiKeyId } : {}) };

/** What `work` came to, a throw (synchronous too) included, as Promise.allSettled reports it. */
async function settle<T>(work: () => T | Promise<T>): Promise<PromiseSettledResult<T>> {
  try {
    return { status: 'fulfilled', value: await work() };
  } catch (reason) {
    return { status: 'rejected', reason };
  }
}

/** Thrown while some commands of a chunk are unresolved (a concurrent writer kept interfering): Agenda retries the chunk. */
class ChunkUnresolvedError extends Error {
  override name = 'ChunkUnresolvedError';
}

/** A chunk's commands applied, with their outcomes to record. */
interface Applied {
  readonly chunk: BulkChunk;
  readonly results: ReadonlyMap<string, CommandOutcome>;
  readonly outcomes: readonly ItemOutcome[];
  /** The chunk's span as a traceparent, when tracing is on: its outcomes are logged in its request's trace. */
  readonly trace: string | undefined;
}

/** Records completed requests' events (idempotently: it may be called again for the same requests); `traces`: each request's trace context in this run, by request id. */
export type CompletionHook = (
  merchantId: string,
  requestIds: readonly string[],
  traces: ReadonlyMap<string, string | undefined>,
) => Promise<void>;

export class BulkWorker implements ChunkHandlers {
  private readonly log: Logger;
  private sweeper: NodeJS.Timeout | undefined;
  private active = 0;
  private lastChunkAt = 0;

  constructor(
    private readonly repository: BulkRepository,
    private readonly subscriptions: SubscriptionsService,
    private readonly queue: BulkQueue,
    private readonly dispatcher: BulkDispatcher,
    log: Logger,
    private readonly completion?: CompletionHook,
  ) {
    this.log = log.child({ component: 'bulk' });
  }

  /** Takes jobs (unless this is an HTTP-only process) and sweeps up requests left undispatched. */
  async start(): Promise<void> {
    await this.queue.consume(this);
    if (!this.queue.isConsuming) return;
    // The chunks this process dispatches are taken here without being read back.
    this.repository.remember();
    this.sweeper = setInterval(() => {
      this.dispatcher.sweep().catch((error: unknown) => this.log.warn({ err: error }, 'bulk dispatch sweep failed'));
    }, SWEEP_EVERY_MS);
    this.sweeper.unref();
  }

  get running(): boolean {
    return this.queue.isConsuming;
  }

  async stop(deadlineMs: number): Promise<void> {
    clearInterval(this.sweeper);
    await this.queue.stop(deadlineMs);
  }

  async process(chunkId: string, merchantId: string | undefined, traceparent?: string): Promise<void> {
    this.active++;
    const timer = metrics()?.chunkDuration.startTimer();
    try {
      // A child of the request that accepted it, when tracing is on.
      await inSpan('bulk chunk', traceparent, { 'subsvc.chunk': chunkId }, () => this.finish(chunkId, merchantId, false));
      timer?.();
    } finally {
      this.active--;
      this.lastChunkAt = Date.now();
    }
  }

  /**
   * Whether this process is applying a bulk request: a chunk is running, or one ended a moment ago
   * (the next locked one starts right after). Background work that can wait (the events relay)
   * waits meanwhile: on FerretDB every write waits for its one writer.
   */
  get busy(): boolean {
    return this.active > 0 || Date.now() - this.lastChunkAt < BETWEEN_CHUNKS_MS;
  }

  /** Retries are spent: record what each command reached, the rest as failed, so the request completes. */
  async giveUp(chunkId: string, error: Error, merchantId: string | undefined): Promise<void> {
    this.log.error({ err: error, chunkId }, 'bulk chunk failed for good');
    await this.finish(chunkId, merchantId, true);
  }

  /**
   * Applies the job's chunk and companions: chunks of the same merchant and operation (pause and
   * resume never together) waiting in the queue, up to RUN_COMMANDS commands in all, whose jobs
   * this run locks as Agenda would; and, while no chunk of another merchant or operation is due,
   * more of them, up to RUN_COMMANDS at a time and EXTENDED_RUN_COMMANDS in all (`more`). Each keeps its own marks and outcomes, and its
   * request completes as usual; what they share is this run (one job's lock, start and completion
   * writes instead of one each) and the write that notes them finished. Their jobs are removed once
   * their requests' completion is recorded; a run killed before leaves their locks to lapse, and
   * their jobs then run and repeat what is missing.
   */
  private async finish(chunkId: string, merchantId: string | undefined, final: boolean): Promise<void> {
    const chunk = await this.repository.findChunk(merchantId, chunkId);
    if (!chunk) return; // past its retention
    // A chunk with outcomes was finished by an earlier run, which may have died before completing the request.
    const room = RUN_COMMANDS - chunk.subscriptionIds.length;
    const first =
      chunk.outcomes || final || room <= 0 ? undefined : await this.queue.lockCompanions(chunk.merchantId, chunk.operation, room);
    const companions = first?.jobs.length
      ? await this.repository.findChunks(
          chunk.merchantId,
          first.jobs.map((j) => j.data.chunkId),
        )
      : [];
    const batches = first ? [first] : [];
    // Renewed until settled below (nothing between here and that `finally` throws: `more` does not).
    const holds = batches.map((b) => this.queue.holdCompanions(b));
    // One after another: on one writer (FerretDB) at once only queues them, and a run holds up to RUN_COMMANDS / CHUNK_SIZE full chunks at a time.
    const settled: PromiseSettledResult<Applied | undefined>[] = [];
    // Each companion continues its own request's trace (the traceparent of its job, among those this
    // run locked), so that its span, its changes' events (and their deliveries) and its log lines are
    // found under the request that sent it.
    const traceOf = (companion: BulkChunk) =>
      batches.flatMap((b) => b.jobs).find((j) => j.data.chunkId === companion.chunkId)?.data.traceparent;
    const applyOne = (c: BulkChunk, known: ReadonlyMap<string, CommandOutcome> | undefined) =>
      c === chunk
        ? this.apply(c, final, known)
        : inSpan('bulk chunk', traceOf(c), { 'subsvc.chunk': c.chunkId, 'subsvc.run_chunk': chunkId }, () => this.apply(c, final, known));
    const applyAll = async (chunks: readonly BulkChunk[]) => {
      const known = await this.together(
        chunks.filter((c) => !c.outcomes),
        (c) => (c === chunk ? currentTraceparent() : traceOf(c)),
      );
      for (const c of chunks) settled.push(await settle(() => (c.outcomes ? undefined : applyOne(c, known.get(c)))));
    };
    await applyAll([chunk, ...companions]);
    let commands = [chunk, ...companions].reduce((n, c) => n + c.subscriptionIds.length, 0);
    // More only when the last lock filled its room (others may be waiting) and the run's own chunk was applied.
    let full = first !== undefined && commands > RUN_COMMANDS - CHUNK_SIZE;
    while (full && settled[0]!.status === 'fulfilled' && commands + RUN_COMMANDS <= EXTENDED_RUN_COMMANDS) {
      const next = await this.more(chunk);
      if (!next) break;
      batches.push(next.locked);
      holds.push(this.queue.holdCompanions(next.locked));
      companions.push(...next.chunks);
      await applyAll(next.chunks);
      const added = next.chunks.reduce((n, c) => n + c.subscriptionIds.length, 0);
      commands += added;
      full = added > RUN_COMMANDS - CHUNK_SIZE;
    }
    const [own, ...others] = settled;
    const applied = companions.filter((companion, i) => {
      const result = others[i]!;
      if (result.status === 'rejected')
        this.log.warn(
          { err: result.reason, chunkId: companion.chunkId },
          'bulk chunk taken as a companion not applied yet; its own job will',
        );
      return result.status === 'fulfilled';
    });
    let finished = new Set<string>();
    try {
      const outcomes = [own!, ...others].flatMap((r) => (r.status === 'fulfilled' && r.value ? [r.value] : []));
      await this.record(chunk.merchantId, outcomes);
      const completions = await this.repository.finishChunks(own!.status === 'fulfilled' ? [chunk, ...applied] : applied, nowTimestamp());
      // Each request's completion continues the trace of its chunk applied in this run (a companion's own).
      const requestTraces = new Map(outcomes.map((a) => [a.chunk.requestId, a.trace]));
      for (const { first: completed, requestId, operation } of completions) {
        if (completed)
          inTraceContext(requestTraces.get(requestId), () => this.log.info({ requestId, operation }, 'bulk request completed'));
      }
      // Recorded by every run that finds the request done (one event: its id comes from the request), so a run killed here is repeated.
      const done = completions.filter((c) => c.done).map((c) => c.requestId);
      if (done.length > 0) await this.completion?.(chunk.merchantId, done, requestTraces);
      finished = new Set(applied.map((c) => c.chunkId));
    } finally {
      for (const release of holds) release();
      // The jobs of companions finished are removed, the others unlocked to run as usual (all of them if the above failed).
      // Should this fail too, their locks lapse and they run then, finding their chunks applied.
      await Promise.all(
        batches.map((locked) =>
          this.queue
            .settleCompanions(locked, finished)
            .catch((error: unknown) =>
              this.log.warn({ err: error, chunkId }, "bulk chunk companions' jobs not settled; they run once their locks lapse"),
            ),
        ),
      );
    }
    if (applied.length > 0) {
      this.log.info(
        { chunkId, operation: chunk.operation, companions: applied.map((c) => c.chunkId), commands },
        'bulk chunks applied together',
      );
    }
    if (own!.status === 'rejected') throw own!.reason;
  }

  /**
   * More companions for a run that has applied a full RUN_COMMANDS, when no chunk of another
   * merchant or operation is due (waiting, or locked ahead by a worker): a run that ends costs its
   * job's completion and removal, its finished note and count, and the next run's start and its
   * companions' lock (on FerretDB, 20–40 ms; a 3000-id request alone paid it at two of its three
   * runs). Other merchants' chunks still wait no longer than for one RUN_COMMANDS. Undefined when
   * none is left, another is due, or the queue could not be read (the run ends as usual).
   */
  private async more(chunk: BulkChunk): Promise<{ locked: LockedJobs<ChunkJobData>; chunks: BulkChunk[] } | undefined> {
    try {
      if (await this.queue.othersDue(chunk.merchantId, chunk.operation)) return undefined;
      const locked = await this.queue.lockCompanions(chunk.merchantId, chunk.operation, RUN_COMMANDS);
      if (locked.jobs.length === 0) return undefined;
      return {
        locked,
        chunks: await this.repository.findChunks(
          chunk.merchantId,
          locked.jobs.map((j) => j.data.chunkId),
        ),
      };
    } catch (error) {
      this.log.warn({ err: error, chunkId: chunk.chunkId }, 'bulk run not extended: the queue could not be read');
      return undefined;
    }
  }

  /**
   * The commands of a run's chunks (one merchant and operation, in the order applied) that name a
   * subscription another of them names too, applied together: one write of each such subscription
   * instead of one per command (SubscriptionsService.applyTogether). Returns each chunk's outcomes
   * settled here; `apply` applies the rest as usual. Should this fail, nothing is settled and every
   * chunk is applied as usual, finding any command that took effect here marked.
   */
  private async together(
    chunks: readonly BulkChunk[],
    traceOf: (chunk: BulkChunk) => string | undefined,
  ): Promise<Map<BulkChunk, ReadonlyMap<string, CommandOutcome>>> {
    if (chunks.length < 2) return new Map();
    try {
      const commands = chunks.map((c) => ({
        requestId: c.requestId,
        cause: causeOf(c),
        ids: c.subscriptionIds,
        schedule: c.schedule,
        trace: traceOf(c),
      }));
      const settled = await this.subscriptions.applyTogether(chunks[0]!.merchantId, chunks[0]!.operation, commands);
      return new Map(chunks.map((c, i) => [c, settled[i]!]));
    } catch (error) {
      this.log.warn({ err: error, chunkIds: chunks.map((c) => c.chunkId) }, 'bulk chunks not applied together; each is applied on its own');
      return new Map();
    }
  }

  /** Applies a chunk's commands (but those `known` already settled); its outcomes, unless some are unresolved and this is not the last try. */
  private async apply(chunk: BulkChunk, final: boolean, known?: ReadonlyMap<string, CommandOutcome>): Promise<Applied> {
    const results = await this.subscriptions.applyCommands(
      chunk.merchantId,
      chunk.subscriptionIds,
      chunk.operation,
      chunk.requestId,
      chunk.schedule,
      causeOf(chunk),
      known,
    );
    const unresolved = [...results.values()].filter((r) => r.outcome === 'failed' && r.reason === KEPT_CHANGING).length;
    if (unresolved > 0 && !final) throw new ChunkUnresolvedError(`${unresolved} commands of chunk ${chunk.chunkId} unresolved`);
    // The time of the merchant's data (its test clock's in test mode), as the changes' modifiedAt: an undo compares the two.
    const at = (await this.subscriptions.clock(chunk.merchantId)).timestamp();
    const outcomes: ItemOutcome[] = chunk.subscriptionIds.map((subscriptionId) => {
      const result = results.get(subscriptionId)!;
      return { subscriptionId, outcome: result.outcome, reason: 'reason' in result ? result.reason : null, at };
    });
    return { chunk, results, outcomes, trace: currentTraceparent() };
  }

  /** Records the chunks' outcomes (one write for all); logged and counted by the run that records them, so that a chunk run twice is logged once. */
  private async record(merchantId: string, applied: readonly Applied[]): Promise<void> {
    if (applied.length === 0) return;
    const recorded = await this.repository.recordOutcomes(
      merchantId,
      applied.map(({ chunk, outcomes }) => ({ chunkId: chunk.chunkId, outcomes })),
    );
    const counter = metrics()?.bulkCommands;
    for (const { chunk, results, outcomes, trace } of applied) {
      if (!recorded.has(chunk.chunkId)) continue;
      // In the trace of the chunk's own request (a companion's, not the run's).
      inTraceContext(trace, () => {
        for (const [subscriptionId, result] of results) this.logOutcome(chunk, subscriptionId, result);
      });
      for (const { outcome } of outcomes) counter?.labels(chunk.operation.toLowerCase(), outcome).inc();
    }
  }

  private logOutcome(chunk: BulkChunk, subscriptionId: string, result: CommandOutcome): void {
    const line = { requestId: chunk.requestId, subscriptionId, operation: chunk.operation, ...result };
    if (result.outcome === 'failed') this.log.error(line, 'bulk command failed');
    else this.log.info(line, `bulk command ${result.outcome}`);
  }
}
