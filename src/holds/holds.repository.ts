/**
 * The one store of the `holds` collection: one document per hold (a pause of a whole store), keyed by its id
 * (a UUIDv7, so that newest first is a walk down `{merchantId, _id}`). An active hold with a
 * `resumeAt` is found by the live schedule workers through `releaseAt`, and by a test mode's clock
 * advance through `testReleaseAt`, as a subscription's pending time is (subscriptions.repository.ts dueFieldOf).
 * Its notice (notice.rules.ts) is pending the same way, in `noticeAt` or `testNoticeAt`, until
 * sent: then `noticeFor` names the resumeAt it announced.
 */
import type { Collection, Db } from 'mongodb';
import { GUARDED } from '../db/guarded.js';
import type { PerKeyQueue } from '../lib/keyed-mutex.js';
import { nowTimestamp } from '../lib/clock.js';
import { livemodeOf } from '../merchants/livemode.js';
import { pageAlongIds } from '../db/mongo-helpers.js';
import type { Page, PageRequest } from '../lib/pagination.js';

const HOLDS_COLLECTION = 'holds';

/** A hold as the service reads it. */
export interface StoredHold {
  readonly id: string;
  readonly merchantId: string;
  readonly status: 'active' | 'released';
  readonly reason: string | null;
  readonly resumeAt: string | null;
  readonly createdAt: string;
  readonly requestId: string;
  readonly releasedAt?: string;
  readonly releaseRequestId?: string;
  /** While its notice is pending: when it falls due. */
  readonly noticeAt?: string;
  /** While its pause request, which covers what it holds, is not completed yet. */
  readonly covering?: true;
}

interface HoldDocument extends Omit<StoredHold, 'id'> {
  _id: string;
  /** While active with a resumeAt, in the merchant's mode: when the workers release it. */
  releaseAt?: string;
  testReleaseAt?: string;
  /** While its notice is pending, in the merchant's mode: when the workers send it. */
  liveNoticeAt?: string;
  testNoticeAt?: string;
  /** The resumeAt whose notice was sent. */
  noticeFor?: string;
  /** From its marking as released until its release request is stored (real time): what a killed process leaves set. */
  releaseUnstoredSince?: string;
  /** From its insert until its pause request is stored (real time): what a process killed while placing it leaves set. */
  placeUnstoredSince?: string;
  /** From its insert until its pause request is completed (real time): its cover is written by the bulk workers meanwhile. */
  coveringSince?: string;
}

/** A hold whose placing and cover are finished: its notice goes to every subscription it covers, not to those covered so far. */
const PLACED = { placeUnstoredSince: { $exists: false }, coveringSince: { $exists: false } } as const;

const dueFieldOf = (merchantId: string) => (livemodeOf(merchantId) ? 'releaseAt' : 'testReleaseAt');
const noticeFieldOf = (merchantId: string) => (livemodeOf(merchantId) ? 'liveNoticeAt' : 'testNoticeAt');

function holdOf({
  _id,
  releaseAt: _live,
  testReleaseAt: _test,
  liveNoticeAt,
  testNoticeAt,
  noticeFor: _sent,
  releaseUnstoredSince: _release,
  placeUnstoredSince: _place,
  coveringSince,
  ...rest
}: HoldDocument): StoredHold {
  const noticeAt = liveNoticeAt ?? testNoticeAt;
  return { id: _id, ...rest, ...(noticeAt !== undefined ? { noticeAt } : {}), ...(coveringSince !== undefined ? { covering: true } : {}) };
}

export class HoldsRepository {
  private readonly collection: Collection<HoldDocument>;

  /** `guard`: where the engine's conditional update is not atomic, a release queues on it (GUARDED.hold). */
  constructor(
    db: Db,
    private readonly guard: PerKeyQueue,
  ) {
    this.collection = db.collection<HoldDocument>(HOLDS_COLLECTION);
  }

  async ensureIndexes(): Promise<void> {
    await this.collection.createIndex({ merchantId: 1, _id: 1 }, { name: 'merchant_holds' });
    await this.collection.createIndex({ releaseAt: 1 }, { name: 'due_holds', sparse: true });
    await this.collection.createIndex({ liveNoticeAt: 1 }, { name: 'due_hold_notices', sparse: true });
    await this.collection.createIndex({ releaseUnstoredSince: 1 }, { name: 'unstored_hold_releases', sparse: true });
    await this.collection.createIndex({ placeUnstoredSince: 1 }, { name: 'unstored_hold_places', sparse: true });
  }

  async insert(hold: StoredHold): Promise<void> {
    const { id, noticeAt, covering: _covering, ...rest } = hold;
    const due = hold.resumeAt !== null ? { [dueFieldOf(hold.merchantId)]: hold.resumeAt } : {};
    const notice = noticeAt !== undefined ? { [noticeFieldOf(hold.merchantId)]: noticeAt } : {};
    const since = nowTimestamp();
    await this.collection.insertOne({ _id: id, ...rest, ...due, ...notice, placeUnstoredSince: since, coveringSince: since });
  }

  /** The merchant's holds still covering whose pause request is one of these (a completion of the bulk workers). */
  async coveringBy(merchantId: string, requestIds: readonly string[]): Promise<StoredHold[]> {
    const docs = await this.collection
      .find({ merchantId, requestId: { $in: [...requestIds] }, coveringSince: { $exists: true } })
      .toArray();
    return docs.map(holdOf);
  }

  /** Its pause request is completed: it covers all it will, and its notice may go. */
  async coverDone(merchantId: string, id: string): Promise<void> {
    // Queued with a release of the same hold: where the engine's updates are not atomic, one would lose the other's fields.
    await this.guard.run(GUARDED.hold(id), () =>
      this.collection.updateOne({ _id: id, merchantId, coveringSince: { $exists: true } }, { $unset: { coveringSince: '' } }),
    );
  }

  /** Its pause request is stored: its placing is finished. */
  async placeStored(merchantId: string, id: string): Promise<void> {
    await this.collection.updateOne({ _id: id, merchantId }, { $unset: { placeUnstoredSince: '' } });
  }

  /** Holds inserted at or before `before` (real time) whose pause request was not stored since (served by unstored_hold_places). */
  async placesUnstored(before: string, limit: number): Promise<StoredHold[]> {
    const docs = await this.collection
      .find({ placeUnstoredSince: { $lte: before } })
      .sort({ placeUnstoredSince: 1 })
      .limit(limit)
      .toArray();
    return docs.map(holdOf);
  }

  async find(merchantId: string, id: string): Promise<StoredHold | undefined> {
    const doc = await this.collection.findOne({ _id: id, merchantId });
    return doc ? holdOf(doc) : undefined;
  }

  /** The merchant's holds, newest first. */
  page(merchantId: string, page: PageRequest): Promise<Page<StoredHold>> {
    return pageAlongIds(this.collection, { merchantId }, page, true, holdOf);
  }

  /** Marks the hold released, only if it is still active (one conditional update): the released hold, or undefined when another release came first. */
  async release(merchantId: string, id: string, releasedAt: string, releaseRequestId: string): Promise<StoredHold | undefined> {
    return this.guard.run(GUARDED.hold(id), async () => {
      const doc = await this.collection.findOneAndUpdate(
        { _id: id, merchantId, status: 'active' },
        {
          $set: { status: 'released', releasedAt, releaseRequestId, releaseUnstoredSince: nowTimestamp() },
          // A notice not sent by its release is dropped: the release has come, there is nothing left to announce.
          $unset: { releaseAt: '', testReleaseAt: '', liveNoticeAt: '', testNoticeAt: '' },
        },
        { returnDocument: 'after' },
      );
      return doc ? holdOf(doc) : undefined;
    });
  }

  /** Live holds whose resumeAt is at or before `now` (served by due_holds), up to `limit`. */
  async due(now: string, limit: number): Promise<StoredHold[]> {
    const docs = await this.collection
      .find({ releaseAt: { $lte: now } })
      .sort({ releaseAt: 1 })
      .limit(limit)
      .toArray();
    return docs.map(holdOf);
  }

  /** A test mode's holds whose resumeAt is at or before its clock's `upTo`. */
  async dueOf(merchantId: string, upTo: string): Promise<StoredHold[]> {
    if (livemodeOf(merchantId)) throw new Error("dueOf reads a test mode only: live holds are the workers'");
    const docs = await this.collection
      .find({ merchantId, testReleaseAt: { $lte: upTo } })
      .sort({ testReleaseAt: 1 })
      .toArray();
    return docs.map(holdOf);
  }

  /** Its release request is stored: nothing is left to finish. */
  async releaseStored(merchantId: string, id: string): Promise<void> {
    await this.collection.updateOne({ _id: id, merchantId }, { $unset: { releaseUnstoredSince: '' } });
  }

  /** Holds marked released at or before `before` (real time) whose release request was not stored since (served by unstored_hold_releases). */
  async releasesUnstored(before: string, limit: number): Promise<StoredHold[]> {
    const docs = await this.collection
      .find({ releaseUnstoredSince: { $lte: before } })
      .sort({ releaseUnstoredSince: 1 })
      .limit(limit)
      .toArray();
    return docs.map(holdOf);
  }

  /** Live holds whose notice is due at or before `now` (served by due_hold_notices), up to `limit`. */
  async noticesDue(now: string, limit: number): Promise<StoredHold[]> {
    const docs = await this.collection
      .find({ liveNoticeAt: { $lte: now }, ...PLACED })
      .sort({ liveNoticeAt: 1 })
      .limit(limit)
      .toArray();
    return docs.map(holdOf);
  }

  /** A test mode's holds whose notice is due by its clock's `upTo`. */
  async noticesDueOf(merchantId: string, upTo: string): Promise<StoredHold[]> {
    if (livemodeOf(merchantId)) throw new Error("noticesDueOf reads a test mode only: live notices are the workers'");
    const docs = await this.collection
      .find({ merchantId, testNoticeAt: { $lte: upTo }, ...PLACED })
      .sort({ testNoticeAt: 1 })
      .toArray();
    return docs.map(holdOf);
  }

  /**
   * Takes the hold's pending notice, as read, off it once sent: one conditional update, so that of
   * two processes sending it exactly one wins (true). A notice moved or dropped meanwhile is left.
   */
  async takeNotice(hold: StoredHold): Promise<boolean> {
    const field = noticeFieldOf(hold.merchantId);
    return this.guard.run(GUARDED.hold(hold.id), async () => {
      const result = await this.collection.updateOne(
        { _id: hold.id, merchantId: hold.merchantId, status: 'active', resumeAt: hold.resumeAt, [field]: hold.noticeAt },
        { $set: { noticeFor: hold.resumeAt! }, $unset: { [field]: '' } },
      );
      return result.modifiedCount === 1;
    });
  }

  /**
   * After a change of resumeNoticeHours: the notice time `noticeAt` makes of each active hold's
   * resumeAt (null: none), for the holds whose notice was not sent yet.
   */
  async setNotices(merchantId: string, noticeAt: (resumeAt: string) => string | null): Promise<void> {
    const field = noticeFieldOf(merchantId);
    for (const hold of await this.activeWithResumeAt(merchantId)) {
      const at = noticeAt(hold.resumeAt!);
      await this.guard.run(GUARDED.hold(hold.id), () =>
        this.collection.updateOne(
          { _id: hold.id, merchantId, status: 'active', noticeFor: { $exists: false } },
          at === null ? { $unset: { [field]: '' } } : { $set: { [field]: at } },
        ),
      );
    }
  }

  /** The merchant's active holds with a resumeAt: when each resumes what it alone keeps paused. */
  async activeWithResumeAt(merchantId: string): Promise<StoredHold[]> {
    const docs = await this.collection
      .find({ merchantId, status: 'active', resumeAt: { $ne: null } })
      .sort({ _id: 1 })
      .toArray();
    return docs.map(holdOf);
  }
}
