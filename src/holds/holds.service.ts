/**
 * Holds (docs/api.md "Holds"): pause a whole store, and release only what the hold
 * alone keeps paused. A hold is one of a paused subscription's holders (subscriptions.rules.ts,
 * HolderField). Placing it is accepted as a bulk by filter is: its pause request names every
 * subscription of the mode that is not cancelled, and the bulk workers cover each (it joins its
 * holders) and pause the `fulfilled` ones, in chunks; releasing it resumes, through another
 * request, those it alone holds. Both are bulk requests like any (stored and dispatched by
 * BulkService, applied in chunks by the bulk workers), whose commands the holders store decides
 * by each subscription's holders; their events carry `cause: {kind: "hold", holdId}`. A hold of
 * more than a bulk request takes is refused (400 0046). Under resumeNoticeHours, its resumeAt gets
 * a notice (docs/webhooks.md); a release a stopped process left without its request is finished
 * by the schedule workers (finishUnstoredReleases), and so is a placing cut short (finishUnplacedHolds).
 */
import type { components } from '../../generated/openapi.js';
import { FilterTooBroadError } from '../bulk/bulk.errors.js';
import type { BulkService } from '../bulk/bulk.service.js';
import { formatTimestamp, nowMicros, type Clock } from '../lib/clock.js';
import { isDuplicateKeyError } from '../db/mongo.js';
import { uuidv7 } from '../lib/ids.js';
import { livemodeOf } from '../merchants/livemode.js';
import type { Page, PageRequest } from '../lib/pagination.js';
import { noticeDueAt } from '../subscriptions/notice.rules.js';
import { MAX_FILTER_MATCHES } from '../subscriptions/bulk.selection.js';
import { scheduleRequestOf } from '../subscriptions/schedule.request.js';
import type { SubscriptionsService } from '../subscriptions/subscriptions.service.js';
import { normaliseId } from '../subscriptions/subscriptions.rules.js';
import { HoldNotFoundError, HoldReleasedError } from './holds.errors.js';
import type { HoldsRepository, StoredHold } from './holds.repository.js';

export type Hold = components['schemas']['Hold'];
type HoldRequest = components['schemas']['HoldRequest'];

/** How many due holds one poll of the schedule workers releases at most. */
const DUE_HOLDS = 100;
/** How long after its marking a release not yet stored is taken for one a killed process left. */
const RELEASE_STORE_GRACE_MS = 10_000;
/** How long after its insert a hold whose pause request is not yet stored is taken for one a killed process left. */
const PLACE_STORE_GRACE_MS = RELEASE_STORE_GRACE_MS;

/** What a hold's notice needs beside the holds: the merchant's rule, and the events relay to tell. */
export interface HoldNotices {
  /** The pause policy's resumeNoticeHours (null: no notices). */
  readonly hoursOf: (merchantId: string) => Promise<number | null>;
  /** Tells the events relay of these subscriptions' new outbox entries. */
  readonly notify: (merchantId: string, ids: readonly string[]) => void;
  /** The time of the merchant's data (a test clock's in test mode): a notice due by then goes once the hold covers all it will. */
  readonly timeOf: (merchantId: string) => Promise<string>;
}

/** A test mode's hold released at its resumeAt by a clock advance (HoldsService.releaseFirstDueOf). */
export interface DueRelease {
  readonly holdId: string;
  readonly at: string;
  /** Its release's bulk request; undefined when another release came first. */
  readonly requestId: string | undefined;
  /** The subscriptions it covered, which its release is applied to. */
  readonly covered: readonly string[];
  /** The subscriptions the holds' notices due by `at` went to. */
  readonly noticed: readonly string[];
}

/** A hold as the API shows it. */
export function holdView({
  id,
  status,
  reason,
  resumeAt,
  createdAt,
  requestId,
  releasedAt,
  releaseRequestId,
  merchantId,
}: StoredHold): Hold {
  return {
    id,
    status,
    reason,
    resumeAt,
    createdAt,
    requestId,
    ...(releasedAt !== undefined ? { releasedAt } : {}),
    ...(releaseRequestId !== undefined ? { releaseRequestId } : {}),
    livemode: livemodeOf(merchantId),
  };
}

export class HoldsService {
  /** Holds this process is placing: its own sweep leaves them to it, however long their cover takes. */
  private readonly placing = new Set<string>();

  constructor(
    private readonly holds: HoldsRepository,
    /** On the background client: a hold over 100,000 subscriptions reads and writes them all (BULK_DB_TIMEOUT_MS). */
    private readonly subscriptions: Pick<SubscriptionsService, 'coverable' | 'coveredBy' | 'pushHoldNotice'>,
    private readonly bulk: Pick<BulkService, 'acceptChosen' | 'acceptedIds' | 'dispatch'>,
    /** Runs a task holding these subscriptions (the per-subscription queue of SubscriptionsService's writes). */
    private readonly guard: (ids: readonly string[], task: () => Promise<void>) => Promise<void>,
    private readonly notices: HoldNotices,
  ) {}

  /**
   * Places a hold over the merchant's subscriptions as a bulk by filter is accepted: one read of
   * what it covers and one insert of its pause request; the bulk workers cover and pause them once
   * the caller calls `dispatch` (after the 202).
   */
  async place(merchantId: string, body: HoldRequest | undefined, clock: Clock): Promise<Hold> {
    const schedule = scheduleRequestOf({ ...(body?.resumeAt !== undefined ? { resumeAt: body.resumeAt } : {}) }, clock);
    const resumeAt = schedule?.resumeAt ?? null;
    const hours = resumeAt === null ? null : await this.notices.hoursOf(merchantId);
    const createdAt = clock.timestamp();
    const hold: StoredHold = {
      id: uuidv7(),
      merchantId,
      status: 'active',
      reason: body?.reason ?? null,
      resumeAt,
      createdAt,
      requestId: uuidv7(),
      // Inside the notice window, the notice is due as the hold is placed (sent once its pause request completes: `covered`).
      ...(resumeAt !== null && hours !== null ? { noticeAt: noticeDueAt(resumeAt, hours, createdAt) } : {}),
    };
    // Read one past the cap, not counted whole: a large store's count can outlast the database's time limit, and the answer is the same refusal.
    const coverable = await this.subscriptions.coverable(merchantId, MAX_FILTER_MATCHES + 1);
    // Its pause and release are one bulk request each, which the contract caps (acceptedCount): refused before anything is stored.
    if (coverable.length > MAX_FILTER_MATCHES) {
      const limit = MAX_FILTER_MATCHES.toLocaleString('en-US');
      throw new FilterTooBroadError(
        `The hold would cover more than ${limit} subscriptions; a hold takes at most ${limit}. Pause by filter in parts instead.`,
      );
    }
    this.placing.add(hold.id);
    try {
      await this.holds.insert(hold);
      await this.finishPlacing(hold, coverable);
    } finally {
      this.placing.delete(hold.id);
    }
    return holdView(hold);
  }

  /**
   * Stores the hold's pause request under the id the hold names, over every subscription it is to
   * cover (the bulk workers then cover and pause them in chunks, as a bulk by filter's), then clears
   * the mark its insert set. Safe to repeat (a second insert of the request finds the id taken), so
   * a placing cut short is finished by running it again. One that covers nothing is covered at once.
   */
  private async finishPlacing(hold: StoredHold, coverable: readonly string[]): Promise<void> {
    const { merchantId, id } = hold;
    await this.storePause(hold, coverable);
    await this.holds.placeStored(merchantId, id);
    if (coverable.length === 0) await this.covered(merchantId, [hold.requestId]);
  }

  private async storePause(hold: StoredHold, accepted: readonly string[]): Promise<void> {
    const { merchantId, id, requestId } = hold;
    try {
      await this.bulk.acceptChosen({ requestId, merchantId, operation: 'PAUSE', accepted, rejected: [], holdId: id });
    } catch (error) {
      if (!isDuplicateKeyError(error)) throw error;
    }
  }

  /**
   * The bulk workers completed these requests: a hold whose pause is one of them covers all it
   * will, so its notice may go: one due by now (as it was placed, or while it was covering) goes
   * now. Safe to repeat.
   */
  async covered(merchantId: string, requestIds: readonly string[]): Promise<void> {
    const holds = await this.holds.coveringBy(merchantId, requestIds);
    if (holds.length === 0) return;
    const now = await this.notices.timeOf(merchantId);
    for (const hold of holds) {
      await this.holds.coverDone(merchantId, hold.id);
      // Read again after the mark is gone: a release meanwhile dropped its notice.
      const placed = hold.noticeAt !== undefined && hold.noticeAt <= now ? await this.holds.find(merchantId, hold.id) : undefined;
      if (placed?.status === 'active' && placed.noticeAt !== undefined) await this.sendNotice(placed);
    }
  }

  /**
   * Finishes the holds a process was killed while placing (the schedule workers' poll): inserted,
   * their pause request never stored. An active one is placed again over what it covers now, as if
   * it had just been placed; one released meanwhile gets its pause request over nothing, so that
   * the request it names is found. Only those inserted PLACE_STORE_GRACE_MS ago and not being
   * placed here: how many it finished.
   */
  async finishUnplacedHolds(): Promise<number> {
    const before = formatTimestamp(nowMicros() - BigInt(PLACE_STORE_GRACE_MS) * 1000n);
    const unplaced = (await this.holds.placesUnstored(before, DUE_HOLDS)).filter((hold) => !this.placing.has(hold.id));
    for (const hold of unplaced) {
      const active = hold.status === 'active';
      await this.finishPlacing(hold, active ? await this.subscriptions.coverable(hold.merchantId, MAX_FILTER_MATCHES + 1) : []);
      if (active) this.dispatch(hold.merchantId, hold.requestId);
    }
    return unplaced.length;
  }

  /** When each of the merchant's active holds with a resumeAt releases, by hold id. */
  async resumeTimes(merchantId: string): Promise<Map<string, string>> {
    return new Map((await this.holds.activeWithResumeAt(merchantId)).map((hold) => [hold.id, hold.resumeAt!]));
  }

  async get(merchantId: string, rawId: string): Promise<Hold> {
    return holdView(await this.stored(merchantId, rawId));
  }

  async list(merchantId: string, page: PageRequest): Promise<Page<Hold>> {
    const found = await this.holds.page(merchantId, { ...page, startingAfter: page.startingAfter?.toLowerCase() });
    return { ...found, data: found.data.map(holdView) };
  }

  /**
   * Releases the hold at `at`: marked released by one conditional update (a second release
   * answers 409 0035), then the resume of what it covers stored as a bulk request, dispatched
   * once the caller calls `dispatch`.
   */
  async release(merchantId: string, rawId: string, at: string): Promise<Hold> {
    const hold = await this.stored(merchantId, rawId);
    if (hold.status === 'released') throw releasedAlready(hold);
    const released = await this.holds.release(merchantId, hold.id, at, uuidv7());
    if (!released) throw releasedAlready((await this.holds.find(merchantId, hold.id)) ?? hold);
    await this.storeRelease(released);
    return holdView(released);
  }

  /**
   * Stores the release request of a hold marked released, under the id that marking gave it, so
   * that two processes finishing one release store one request (the second insert finds the id
   * taken); then clears the mark's loose end. Returns the subscriptions it covers.
   */
  private async storeRelease(released: StoredHold): Promise<string[]> {
    const { merchantId, id } = released;
    const covered = await this.subscriptions.coveredBy(merchantId, id);
    const accepted = released.covering ? [...new Set([...covered, ...(await this.pauseIds(released))])].sort() : covered;
    try {
      await this.bulk.acceptChosen({
        requestId: released.releaseRequestId!,
        merchantId,
        operation: 'RESUME',
        accepted,
        rejected: [],
        holdId: id,
      });
    } catch (error) {
      if (!isDuplicateKeyError(error)) throw error;
    }
    await this.holds.releaseStored(merchantId, id);
    return accepted;
  }

  /**
   * What the pause of a hold released while still covering names: its release names them too, so
   * that one its pause has not reached yet is passed over by it (holders.store.ts, releasedMark).
   * A pause request not stored yet (its placing cut short, or still under way) is stored here over
   * what it would cover, so that both name the same subscriptions and the hold's request is found.
   */
  private async pauseIds(hold: StoredHold): Promise<string[]> {
    const { merchantId, requestId } = hold;
    const stored = await this.bulk.acceptedIds(merchantId, requestId);
    if (stored) return stored;
    await this.storePause(hold, await this.subscriptions.coverable(merchantId, MAX_FILTER_MATCHES));
    this.dispatch(merchantId, requestId);
    return (await this.bulk.acceptedIds(merchantId, requestId)) ?? [];
  }

  /**
   * Finishes the releases a process was killed in the middle of: marked released, their request
   * never stored (the schedule workers' poll). Only those marked RELEASE_STORE_GRACE_MS ago, so
   * that a release still being stored is normally left to its own process: how many it stored.
   */
  async finishUnstoredReleases(): Promise<number> {
    const before = formatTimestamp(nowMicros() - BigInt(RELEASE_STORE_GRACE_MS) * 1000n);
    const unstored = await this.holds.releasesUnstored(before, DUE_HOLDS);
    for (const hold of unstored) {
      await this.storeRelease(hold);
      this.dispatch(hold.merchantId, hold.releaseRequestId!);
    }
    return unstored.length;
  }

  /** Hands a hold's request to the bulk workers: after the 202 of the request that stored it. */
  dispatch(merchantId: string, requestId: string): void {
    this.bulk.dispatch(merchantId, requestId);
  }

  /** Releases the live holds whose resumeAt has come (the schedule workers' poll): how many. */
  async releaseDue(now: string): Promise<number> {
    let released = 0;
    for (const hold of await this.holds.due(now, DUE_HOLDS)) released += await this.releaseFallenDue(hold);
    return released;
  }

  /**
   * Releases the test mode's earliest hold whose resumeAt its clock reached (`upTo`; a clock
   * advance), at its resumeAt, after sending the holds' notices due by then. The caller applies
   * its resumes at that time, then dispatches its request, whose workers find them applied
   * (their marks) and record them. Undefined when none is due.
   */
  async releaseFirstDueOf(merchantId: string, upTo: string): Promise<DueRelease | undefined> {
    const [hold] = await this.holds.dueOf(merchantId, upTo);
    if (!hold) return undefined;
    const at = hold.resumeAt!;
    const noticed = await this.sendDueNoticesOf(merchantId, at);
    const released = await this.holds.release(merchantId, hold.id, at, uuidv7());
    // Released by a request, or another advance, meanwhile: its own process applies it.
    if (!released) return { holdId: hold.id, at, requestId: undefined, covered: [], noticed };
    return { holdId: hold.id, at, requestId: released.releaseRequestId!, covered: await this.storeRelease(released), noticed };
  }

  /** Sends the live holds' notices that have fallen due (the schedule workers' poll): the subscriptions they went to. */
  async sendDueNotices(now: string): Promise<number> {
    let sent = 0;
    for (const hold of await this.holds.noticesDue(now, DUE_HOLDS)) sent += (await this.sendNotice(hold)).length;
    return sent;
  }

  /** Sends a test mode's holds' notices its clock reached (a clock advance): the subscriptions they went to. */
  async sendDueNoticesOf(merchantId: string, upTo: string): Promise<string[]> {
    const sent: string[] = [];
    for (const hold of await this.holds.noticesDueOf(merchantId, upTo)) sent.push(...(await this.sendNotice(hold)));
    return sent;
  }

  /**
   * A hold's notice (notice.rules.ts): pushed to every subscription its release will resume, each
   * entry named by the hold and its resumeAt (so a repeat, by another process or after a kill,
   * makes no second event: events are inserted by id), then taken off the hold by one conditional
   * update. Returns the subscriptions it went to; none when another process took it first.
   */
  private async sendNotice(hold: StoredHold): Promise<string[]> {
    const notice = { holdId: hold.id, resumeAt: hold.resumeAt!, at: hold.noticeAt! };
    const ids = await this.subscriptions.pushHoldNotice(hold.merchantId, notice, this.guard);
    if (!(await this.holds.takeNotice(hold))) return [];
    this.notices.notify(hold.merchantId, ids);
    return ids;
  }

  private async releaseFallenDue(hold: StoredHold): Promise<number> {
    try {
      const released = await this.release(hold.merchantId, hold.id, hold.resumeAt!);
      this.dispatch(hold.merchantId, released.releaseRequestId!);
      return 1;
    } catch (error) {
      // Released by a request, or another worker, meanwhile: nothing left to do.
      if (error instanceof HoldReleasedError) return 0;
      throw error;
    }
  }

  private async stored(merchantId: string, rawId: string): Promise<StoredHold> {
    const id = normaliseId(rawId);
    const hold = id === undefined ? undefined : await this.holds.find(merchantId, id);
    if (!hold) throw new HoldNotFoundError(`Hold ${rawId} not found`);
    return hold;
  }
}

function releasedAlready(hold: StoredHold): HoldReleasedError {
  const by = hold.releaseRequestId ? `, by bulk request ${hold.releaseRequestId}` : '';
  return new HoldReleasedError(`Hold ${hold.id} is released already${by}.`);
}
