/**
 * Every read and write of Agenda's own job documents that does not go through Agenda: the fleet
 * status's counts, new jobs inserted many at once, and the lock, renewal, removal and unlock of
 * the jobs a bulk run takes as companions (src/bulk/bulk.run.ts). Each reads and writes the fields
 * of `AgendaJobDocument` as Agenda itself does (@agendajs/mongo-backend's MongoJobRepository).
 * test/db/agenda-jobs.test.ts checks those fields and their meaning against the installed Agenda, and
 * fails when its version is not AGENDA_CHECKED's, so that an upgrade checks them again.
 */
import { randomUUID } from 'node:crypto';
import type { Collection, Db, Filter, ObjectId } from 'mongodb';

/** The versions whose job documents these reads and writes were checked against (test/db/agenda-jobs.test.ts). */
export const AGENDA_CHECKED = { agenda: '6.2.6', mongoBackend: '4.0.3' } as const;

/** The fields of Agenda's job documents read or written here, as Agenda stores them. */
export interface AgendaJobDocument<Data> {
  _id: ObjectId;
  name: string;
  data: Data;
  /** When the job is due; null once a run of it has started (and, unless removed, after it ended). */
  nextRunAt: Date | null;
  /** When whoever holds the job locked it (an Agenda worker, or a bulk run); null or absent: free. A lock older than the lock lifetime lapses. */
  lockedAt?: Date | null;
  /** Who wrote the job last: a bulk run's lock token marks the jobs it locked. */
  lastModifiedBy: string | null;
  /** true: never run. */
  disabled: boolean | null;
}

/** Which jobs: a queue's collection and its jobs' name. */
export interface JobsOf {
  readonly collection: string;
  readonly jobName: string;
}

/** Jobs locked by `AgendaJobs.lockDue`, by their data, with the lock's own mark. */
export interface LockedJobs<Data> {
  readonly token: string;
  readonly jobs: readonly { readonly id: ObjectId; readonly data: Data }[];
}

/** Fields Agenda's save stores as null when a new job has none (MongoJobRepository.saveJob). */
const NULL_WHEN_UNSET = [
  'lockedAt',
  'lastFinishedAt',
  'failedAt',
  'failCount',
  'failReason',
  'repeatTimezone',
  'lastRunAt',
  'repeatInterval',
  'repeatAt',
  'disabled',
  'progress',
  'debounceStartedAt',
  'fork',
  'startDate',
  'endDate',
  'skipDays',
] as const;

/** The document Agenda's save inserts for a new job (given its `toJson(true)`), with no `lastModifiedBy` (the queue's Agenda has no name). */
function newJobDocument(job: object): Record<string, unknown> {
  const { _id: _i, unique: _u, uniqueOpts: _o, ...props } = job as Record<string, unknown>;
  return { ...props, ...Object.fromEntries(NULL_WHEN_UNSET.map((key) => [key, props[key] ?? null])), lastModifiedBy: null };
}

/** Keys of `where` as a filter on the jobs' data. */
function onData(where: object): Record<string, unknown> {
  return Object.fromEntries(Object.entries(where).map(([key, value]) => [`data.${key}`, value]));
}

export class AgendaJobs<Data extends object> {
  private readonly collection: Collection<AgendaJobDocument<Data>>;
  private readonly name: string;

  constructor(db: Db, jobs: JobsOf) {
    this.collection = db.collection<AgendaJobDocument<Data>>(jobs.collection);
    this.name = jobs.jobName;
  }

  /** Jobs not finished (waiting, or locked ahead of their run), counted up to `cap`: `subsvc status` and the fleet gauges. */
  countUnfinished(cap: number): Promise<number> {
    return this.collection.countDocuments({ name: this.name, nextRunAt: { $ne: null } }, { limit: cap });
  }

  /** When the oldest unfinished job was queued (its `_id` is an ObjectId, served by `_id`); undefined: none. */
  async oldestUnfinishedAt(): Promise<number | undefined> {
    const doc = await this.collection
      .find({ name: this.name, nextRunAt: { $ne: null } }, { projection: { _id: 1 } })
      .sort({ _id: 1 })
      .limit(1)
      .next();
    return doc ? doc._id.getTimestamp().getTime() : undefined;
  }

  /** Inserts new jobs in one write, each the document Agenda's own save would insert (given Agenda's `job.toJson(true)`). */
  async insertNew(jobs: readonly object[]): Promise<void> {
    if (jobs.length > 0) await this.collection.insertMany(jobs.map((job) => newJobDocument(job) as never));
  }

  /**
   * Locks for the caller, as Agenda locks a job it takes, the due jobs whose data matches `where`
   * that no one holds and that `pick` keeps, reading at most `scan`. Agenda runs none of them while
   * locked; the caller removes those it did the work of (`removeLocked`) and unlocks the others
   * (`unlock`). A caller that dies leaves the lock to lapse after the lock lifetime, as a run that
   * dies does. Where the engine's conditional update is not atomic across processes (FerretDB),
   * two callers may lock the same job: a job's work must be safe to do twice.
   */
  async lockDue(where: Partial<Data>, scan: number, pick: (waiting: readonly Data[]) => readonly Data[]): Promise<LockedJobs<Data>> {
    const now = new Date();
    const free = { name: this.name, disabled: { $ne: true }, lockedAt: null, nextRunAt: { $lte: now } };
    const waiting = await this.collection
      .find({ ...free, ...onData(where) } as Filter<AgendaJobDocument<Data>>, { projection: { _id: 1, data: 1 } })
      .limit(scan)
      .toArray();
    const picked = new Set(pick(waiting.map((j) => j.data)));
    const chosen = waiting.filter((j) => picked.has(j.data));
    const token = `lock ${randomUUID()}`;
    if (chosen.length === 0) return { token, jobs: [] };
    const ids = chosen.map((j) => j._id);
    const { modifiedCount } = await this.collection.updateMany(
      { _id: { $in: ids }, lockedAt: null },
      {
        $set: { lockedAt: now, lastModifiedBy: token },
      },
    );
    // Every one locked by this update: nothing to read back.
    const locked =
      modifiedCount === ids.length
        ? chosen
        : await this.collection.find({ _id: { $in: ids }, lastModifiedBy: token }, { projection: { _id: 1, data: 1 } }).toArray();
    return { token, jobs: locked.map((j) => ({ id: j._id, data: j.data })) };
  }

  /** Whether a job is due (locked or not) whose data differs from `other` in some field: one read of at most one job. */
  async anyDueBesides(other: Partial<Data>): Promise<boolean> {
    const differs = Object.entries(onData(other)).map(([key, value]) => ({ [key]: { $ne: value } }));
    const due = await this.collection.findOne(
      { name: this.name, disabled: { $ne: true }, nextRunAt: { $lte: new Date() }, $or: differs } as Filter<AgendaJobDocument<Data>>,
      { projection: { _id: 1 } },
    );
    return due !== null;
  }

  /** Removes the jobs of `locked` whose data `which` keeps, while still locked by it (a lapsed lock taken by a run is left to that run). */
  async removeLocked(locked: LockedJobs<Data>, which: (data: Data) => boolean): Promise<void> {
    const filter = this.stillLocked(locked, which);
    if (filter) await this.collection.deleteMany(filter);
  }

  /** Unlocks the jobs of `locked` whose data `which` keeps: due again at once. */
  async unlock(locked: LockedJobs<Data>, which: (data: Data) => boolean): Promise<void> {
    const filter = this.stillLocked(locked, which);
    if (filter) await this.collection.updateMany(filter, { $unset: { lockedAt: true } });
  }

  /** Renews the lock of the jobs of `locked` still held by it, as Agenda renews a running job's lock. */
  async renewLocked(locked: LockedJobs<Data>): Promise<void> {
    const filter = this.stillLocked(locked, () => true);
    if (filter) await this.collection.updateMany(filter, { $set: { lockedAt: new Date() } });
  }

  private stillLocked(locked: LockedJobs<Data>, which: (data: Data) => boolean): Filter<AgendaJobDocument<Data>> | undefined {
    const ids = locked.jobs.filter((j) => which(j.data)).map((j) => j.id);
    if (ids.length === 0) return undefined;
    return { _id: { $in: ids }, name: this.name, lastModifiedBy: locked.token };
  }
}
