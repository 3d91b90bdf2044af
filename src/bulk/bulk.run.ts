/**
 * One run of a bulk chunk job, in the order it happens (`run`): lock companions, take them, apply,
 * take more while nothing else is due, record the outcomes, finish the chunks and their requests,
 * release the companions' jobs.
 *
 * Companions are chunks of the same merchant and operation (pause and resume never together)
 * waiting in the queue, whose jobs the run locks as Agenda would (src/db/agenda-jobs.ts). Each
 * keeps its own marks and outcomes, and its request completes as usual; what they share is this
 * run (one job's lock, start and completion writes instead of one each) and the writes that record
 * and finish them (docs/reliability.md).
 *
 * The one rule (docs/design.md §6): a command takes effect at most once, whatever runs twice.
 * The change and its mark are one update of the subscription's own document, and a chunk's
 * outcomes are recorded once, by the first run that finishes it. So a chunk run again (its
 * worker was killed, its lock expired, two workers took it at once) changes nothing and counts
 * nothing twice, and never undoes a change made after its command was applied. A run killed
 * before it releases its companions leaves their locks to lapse; their jobs then run and repeat
 * what is missing.
 */
import type { LockedJobs } from '../db/agenda-jobs.js';
import { nowTimestamp } from '../lib/clock.js';
import { Periodic } from '../lib/periodic.js';
import type { Logger } from '../logger.js';
import { metrics } from '../observability/metrics.js';
import { currentTraceparent, inSpan, inTraceContext } from '../observability/tracing.js';
import type { CommandOutcome } from '../subscriptions/bulk-commands.rules.js';
import { KEPT_CHANGING, type SubscriptionsService } from '../subscriptions/subscriptions.service.js';
import type { ChangeCause } from '../subscriptions/subscriptions.rules.js';
import { CHUNK_SIZE, type ChunkJobData } from './bulk.chunks.js';
import { ChunkUnresolvedError } from './bulk.errors.js';
import type { BulkQueue } from './bulk.queue.js';
import type { BulkChunk, BulkRepository, ItemOutcome } from './bulk.repository.js';

/**
 * Commands one run applies at most, its own chunk's and its companions': ten full chunks. What a
 * run costs beside its chunks' updates is then shared by up to ten chunks, not one; larger, a run
 * would hold its job slot longer before other merchants' chunks get it, most where a process has
 * one slot (oneJobAtATime, src/db/workarounds.ts; docs/reliability.md).
 */
export const RUN_COMMANDS = 10 * CHUNK_SIZE;
/**
 * Commands a run applies at most when it takes more companions while no other merchant's or
 * operation's chunk is due (`takeMore`): a 3000-id request alone is then applied in two runs, not
 * three. Bounds what a run killed repeats.
 */
export const EXTENDED_RUN_COMMANDS = 5 * RUN_COMMANDS;
/** Waiting jobs read when looking for a run's companions: enough to fill a run with small chunks. */
const COMPANIONS_READ = 50;

/** Records completed requests' events (idempotently: it may be called again for the same requests); `traces`: each request's trace context in this run, by request id. */
export type CompletionHook = (
  merchantId: string,
  requestIds: readonly string[],
  traces: ReadonlyMap<string, string | undefined>,
) => Promise<void>;

/** What a run needs: the stores it reads and writes, and where it reports. */
export interface RunContext {
  readonly repository: BulkRepository;
  readonly subscriptions: SubscriptionsService;
  readonly queue: Pick<BulkQueue, 'jobs' | 'options'>;
  readonly log: Logger;
  readonly completion?: CompletionHook;
}

/** What a chunk's changes record as their cause: its request, and the API key that sent it, or the hold whose request it is. */
const causeOf = (chunk: BulkChunk): ChangeCause =>
  chunk.holdId
    ? { kind: 'hold', holdId: chunk.holdId, requestId: chunk.requestId }
    : { kind: 'bulk', requestId: chunk.requestId, ...(chunk.apiKeyId ? { apiKeyId: chunk.apiKeyId } : {}) };

const commandsOf = (chunks: readonly BulkChunk[]) => chunks.reduce((n, c) => n + c.subscriptionIds.length, 0);

/** What `work` came to, a throw (synchronous too) included, as Promise.allSettled reports it. */
async function settle<T>(work: () => T | Promise<T>): Promise<PromiseSettledResult<T>> {
  try {
    return { status: 'fulfilled', value: await work() };
  } catch (reason) {
    return { status: 'rejected', reason };
  }
}

/** A chunk's commands applied, with their outcomes to record. */
interface Applied {
  readonly chunk: BulkChunk;
  readonly results: ReadonlyMap<string, CommandOutcome>;
  readonly outcomes: readonly ItemOutcome[];
  /** The chunk's span as a traceparent, when tracing is on: its outcomes are logged in its request's trace. */
  readonly trace: string | undefined;
}

/** Companions' jobs this run locked, and the renewals of their locks until released. */
interface Held {
  readonly locked: LockedJobs<ChunkJobData>;
  readonly renewal: Periodic | undefined;
}

export class BulkRun {
  private readonly held: Held[] = [];
  private readonly companions: BulkChunk[] = [];
  /** What applying each chunk came to: the run's own chunk first, then its companions in order. */
  private readonly settled: PromiseSettledResult<Applied | undefined>[] = [];
  private commands: number;
  /** Whether the last lock of companions filled its room (others may be waiting). */
  private filled = false;

  private constructor(
    private readonly context: RunContext,
    private readonly chunk: BulkChunk,
    /** The chunk's last try: its retries are spent, so what is unresolved is recorded as failed. */
    private readonly final: boolean,
  ) {
    this.commands = chunk.subscriptionIds.length;
  }

  /** Runs the job of this chunk; a chunk past its retention is not there, and there is nothing to do. */
  static async of(context: RunContext, merchantId: string, chunkId: string, final: boolean): Promise<void> {
    const chunk = await context.repository.findChunk(merchantId, chunkId);
    if (chunk) await new BulkRun(context, chunk, final).run();
  }

  private async run(): Promise<void> {
    let finished: ReadonlySet<string> = new Set();
    try {
      const first = await this.takeCompanions(RUN_COMMANDS - this.commands);
      this.filled = this.commands > RUN_COMMANDS - CHUNK_SIZE;
      await this.apply([this.chunk, ...first]);
      await this.takeMore();
      finished = await this.finish(await this.record());
    } finally {
      await this.release(finished);
    }
    const own = this.settled[0]!;
    if (own.status === 'rejected') throw own.reason;
  }

  /**
   * Locks waiting jobs of companions holding up to `room` commands and takes their chunks; none for
   * a chunk an earlier run finished (it may have died before completing the request) or on its
   * last try. A job of a chunk already in the run stays locked, and is removed once that chunk is finished.
   */
  private async takeCompanions(room: number): Promise<BulkChunk[]> {
    if (this.chunk.outcomes || this.final || room <= 0) return [];
    const { merchantId, operation } = this.chunk;
    const locked = await this.context.queue.jobs.lockDue({ merchantId, operation }, COMPANIONS_READ, (waiting) =>
      waiting.filter(({ commands }) => {
        if (commands > room) return false;
        room -= commands;
        return true;
      }),
    );
    this.hold(locked);
    const found =
      locked.jobs.length === 0
        ? []
        : await this.context.repository.findChunks(
            merchantId,
            locked.jobs.map((j) => j.data.chunkId),
          );
    // A chunk queued twice (a dispatch repeated) is taken once: applied twice in one run, its second command would mark the first's changes no-ops.
    const inRun = new Set([this.chunk.chunkId, ...this.companions.map((c) => c.chunkId)]);
    const chunks = found.filter((c) => !inRun.has(c.chunkId) && inRun.add(c.chunkId));
    this.companions.push(...chunks);
    this.commands += commandsOf(chunks);
    return chunks;
  }

  /**
   * Renews the companions' locks every third of the lock lifetime until released, as Agenda renews
   * the lock of the job running: a run of RUN_COMMANDS commands on a busy database can outlast the
   * lifetime, and its companions would then run a second time meanwhile.
   */
  private hold(locked: LockedJobs<ChunkJobData>): void {
    const { queue, log } = this.context;
    const renewal =
      locked.jobs.length === 0
        ? undefined
        : new Periodic(() => queue.jobs.renewLocked(locked), {
            everyMs: Math.max(queue.options.lockLifetimeMs / 3, 100),
            jitter: 0,
            failed: (error) => log.warn({ err: error }, "could not renew bulk chunk companions' locks"),
          });
    renewal?.start();
    this.held.push({ locked, renewal });
  }

  /**
   * More companions, RUN_COMMANDS at a time up to EXTENDED_RUN_COMMANDS in all, while the last lock
   * filled its room, the run's own chunk was applied, and no chunk of another merchant or
   * operation is due (waiting, or locked ahead by a worker): other merchants' chunks then wait no
   * longer than for one RUN_COMMANDS. Should the queue not be read, the run ends as usual.
   */
  private async takeMore(): Promise<void> {
    const { merchantId, operation } = this.chunk;
    while (this.filled && this.settled[0]!.status === 'fulfilled' && this.commands + RUN_COMMANDS <= EXTENDED_RUN_COMMANDS) {
      let more: BulkChunk[];
      try {
        if (await this.context.queue.jobs.anyDueBesides({ merchantId, operation })) return;
        more = await this.takeCompanions(RUN_COMMANDS);
        this.filled = commandsOf(more) > RUN_COMMANDS - CHUNK_SIZE;
      } catch (error) {
        this.context.log.warn({ err: error, chunkId: this.chunk.chunkId }, 'bulk run not extended: the queue could not be read');
        return;
      }
      if (more.length === 0) return;
      await this.apply(more);
    }
  }

  /**
   * Applies the chunks one after another (a run is one job's work: chunks run side by side in
   * other job slots and processes), each companion in its own request's trace, so that its span, its changes' events and its log lines
   * are found under the request that sent it. A chunk an earlier run finished is not applied again.
   */
  private async apply(chunks: readonly BulkChunk[]): Promise<void> {
    const known = await this.applyTogether(chunks.filter((c) => !c.outcomes));
    for (const chunk of chunks) {
      this.settled.push(
        await settle(() => {
          if (chunk.outcomes) return undefined;
          if (chunk === this.chunk) return this.applyOne(chunk, known.get(chunk));
          const attributes = { 'subsvc.chunk': chunk.chunkId, 'subsvc.run_chunk': this.chunk.chunkId };
          return inSpan('bulk chunk', this.traceOf(chunk), attributes, () => this.applyOne(chunk, known.get(chunk)));
        }),
      );
    }
  }

  /** The trace a chunk of this run continues: the run's own, or a companion's job's traceparent. */
  private traceOf(chunk: BulkChunk): string | undefined {
    if (chunk === this.chunk) return currentTraceparent();
    return this.held.flatMap((h) => h.locked.jobs).find((j) => j.data.chunkId === chunk.chunkId)?.data.traceparent;
  }

  /**
   * The commands of these chunks that name a subscription another of them names too, applied
   * together: one write of each such subscription instead of one per command
   * (SubscriptionsService.applyTogether). Returns each chunk's outcomes settled here; `applyOne`
   * applies the rest. Should this fail, nothing is settled and every chunk is applied on its own,
   * finding any command that took effect here marked.
   */
  private async applyTogether(chunks: readonly BulkChunk[]): Promise<Map<BulkChunk, ReadonlyMap<string, CommandOutcome>>> {
    if (chunks.length < 2) return new Map();
    try {
      const commands = chunks.map((c) => ({
        requestId: c.requestId,
        cause: causeOf(c),
        ids: c.subscriptionIds,
        // A schedule, or an undo's condition (unchangedSince), keeps a command's subscriptions to the usual way, in order.
        alone: c.schedule !== undefined || c.unchangedSince !== undefined,
        trace: this.traceOf(c),
      }));
      const settled = await this.context.subscriptions.applyTogether(this.chunk.merchantId, this.chunk.operation, commands);
      return new Map(chunks.map((c, i) => [c, settled[i]!]));
    } catch (error) {
      const chunkIds = chunks.map((c) => c.chunkId);
      this.context.log.warn({ err: error, chunkIds }, 'bulk chunks not applied together; each is applied on its own');
      return new Map();
    }
  }

  /** Applies a chunk's commands (but those `known` already settled); its outcomes, unless some are unresolved and this is not the last try. */
  private async applyOne(chunk: BulkChunk, known?: ReadonlyMap<string, CommandOutcome>): Promise<Applied> {
    const { subscriptions } = this.context;
    const { merchantId, subscriptionIds, operation, requestId, schedule, unchangedSince } = chunk;
    const cause = causeOf(chunk);
    const command = { merchantId, ids: subscriptionIds, requestId, schedule, cause, settled: known, unchangedSince };
    const results = await subscriptions.applyCommands(command, operation);
    const unresolved = [...results.values()].filter((r) => r.outcome === 'failed' && r.reason === KEPT_CHANGING).length;
    if (unresolved > 0 && !this.final) throw new ChunkUnresolvedError(`${unresolved} commands of chunk ${chunk.chunkId} unresolved`);
    // The time of the merchant's data (its test clock's in test mode), as the changes' modifiedAt: an undo compares the two.
    const at = (await subscriptions.clock(merchantId)).timestamp();
    const outcomes: ItemOutcome[] = subscriptionIds.map((subscriptionId) => {
      const result = results.get(subscriptionId)!;
      return { subscriptionId, outcome: result.outcome, reason: 'reason' in result ? result.reason : null, at };
    });
    return { chunk, results, outcomes, trace: currentTraceparent() };
  }

  /**
   * Records the applied chunks' outcomes (one write for all); logged and counted by the run that
   * records them, so that a chunk run twice is logged once. Returns what was applied.
   */
  private async record(): Promise<Applied[]> {
    const applied = this.settled.flatMap((r) => (r.status === 'fulfilled' && r.value ? [r.value] : []));
    if (applied.length === 0) return applied;
    const records = applied.map(({ chunk, outcomes }) => ({ chunkId: chunk.chunkId, outcomes }));
    const recorded = await this.context.repository.recordOutcomes(this.chunk.merchantId, records);
    const counter = metrics()?.bulkCommands;
    for (const { chunk, results, outcomes, trace } of applied) {
      if (!recorded.has(chunk.chunkId)) continue;
      // In the trace of the chunk's own request (a companion's, not the run's).
      inTraceContext(trace, () => {
        for (const [subscriptionId, result] of results) this.logOutcome(chunk, subscriptionId, result);
      });
      for (const { outcome } of outcomes) counter?.labels(chunk.operation.toLowerCase(), outcome).inc();
    }
    return applied;
  }

  private logOutcome(chunk: BulkChunk, subscriptionId: string, result: CommandOutcome): void {
    const line = { requestId: chunk.requestId, subscriptionId, operation: chunk.operation, ...result };
    if (result.outcome === 'failed') this.context.log.error(line, 'bulk command failed');
    else this.context.log.info(line, `bulk command ${result.outcome}`);
  }

  /**
   * Notes the chunks applied finished (the run's own too, unless it failed), completes the requests
   * all of whose chunks are, and records their events. Returns the chunks finished (the own one when applied) whose companion jobs are to go.
   */
  private async finish(applied: readonly Applied[]): Promise<Set<string>> {
    const { repository, log, completion } = this.context;
    const companions = this.companions.filter((companion, i) => {
      const result = this.settled[i + 1]!;
      if (result.status === 'rejected')
        log.warn({ err: result.reason, chunkId: companion.chunkId }, 'bulk chunk taken as a companion not applied yet; its own job will');
      return result.status === 'fulfilled';
    });
    const ownApplied = this.settled[0]!.status === 'fulfilled';
    const completions = await repository.finishChunks(ownApplied ? [this.chunk, ...companions] : companions, nowTimestamp());
    // Each request's completion continues the trace of its chunk applied in this run (a companion's own).
    const requestTraces = new Map(applied.map((a) => [a.chunk.requestId, a.trace]));
    for (const { first, requestId, operation } of completions) {
      if (first) inTraceContext(requestTraces.get(requestId), () => log.info({ requestId, operation }, 'bulk request completed'));
    }
    // Recorded by every run that finds the request done (one event: its id comes from the request), so a run killed here is repeated.
    const done = completions.filter((c) => c.done).map((c) => c.requestId);
    if (done.length > 0) await completion?.(this.chunk.merchantId, done, requestTraces);
    if (companions.length > 0) {
      const { chunkId, operation } = this.chunk;
      const companionIds = companions.map((c) => c.chunkId);
      log.info({ chunkId, operation, companions: companionIds, commands: this.commands }, 'bulk chunks applied together');
    }
    // The own chunk too: a second job of it taken as a companion is then removed with theirs.
    return new Set([...(ownApplied ? [this.chunk.chunkId] : []), ...companions.map((c) => c.chunkId)]);
  }

  /**
   * Removes the jobs of the companions finished and unlocks the others, to run as usual (all of
   * them when the run failed before finishing). Should this fail too, their locks lapse and they
   * run then, finding their chunks applied.
   */
  private async release(finished: ReadonlySet<string>): Promise<void> {
    const { queue, log } = this.context;
    for (const { renewal } of this.held) void renewal?.stop();
    await Promise.all(
      this.held.map(({ locked }) =>
        Promise.all([
          queue.jobs.removeLocked(locked, ({ chunkId }) => finished.has(chunkId)),
          queue.jobs.unlock(locked, ({ chunkId }) => !finished.has(chunkId)),
        ]).catch((error: unknown) =>
          log.warn({ err: error, chunkId: this.chunk.chunkId }, "bulk chunk companions' jobs not settled; they run once their locks lapse"),
        ),
      ),
    );
  }
}
