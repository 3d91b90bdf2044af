/**
 * What src/db/agenda-jobs.ts takes for granted about Agenda's own job documents, checked against
 * the installed Agenda on the embedded database: the version is the one checked (an upgrade fails
 * here first, and these checks are read again), a job saved through Agenda's public API has the
 * fields and types the direct reads and writes use, and Agenda honours the direct writes (a
 * locked job is not run, an unlocked one is, a finished one is not counted).
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agenda } from 'agenda';
import { MongoBackend } from '@agendajs/mongo-backend';
import { MongoClient, ObjectId, type Db } from 'mongodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { AGENDA_CHECKED, AgendaJobs } from '../../src/db/agenda-jobs.js';
import { waitFor } from '../support/wait.js';

interface Data {
  chunkId: string;
  merchantId: string;
  operation: 'PAUSE' | 'RESUME';
  commands: number;
}

const installed = (name: string): string =>
  (JSON.parse(readFileSync(resolve(import.meta.dirname, '../../node_modules', name, 'package.json'), 'utf8')) as { version: string })
    .version;

let client: MongoClient;
let db: Db;
const agendas: Agenda[] = [];

beforeAll(async () => {
  client = await new MongoClient(inject('mongoUri')).connect();
  db = client.db(`agenda_jobs_${randomUUID().slice(0, 8)}`);
});
afterAll(async () => {
  await Promise.all(agendas.map((agenda) => agenda.stop(false)));
  await db?.dropDatabase();
  await client?.close();
});

/** An Agenda on its own collection, as src/db/job-queue.ts makes one. */
async function agendaOn(collection: string, options: { removeOnComplete?: boolean } = {}): Promise<Agenda> {
  const agenda = new Agenda({
    backend: new MongoBackend({ mongo: db, collection }),
    processEvery: 50,
    defaultLockLifetime: 60_000,
    ...options,
  });
  agendas.push(agenda);
  await agenda.ready;
  return agenda;
}

const data = (chunkId: string, merchantId = 'm1', operation: Data['operation'] = 'PAUSE'): Data => ({
  chunkId,
  merchantId,
  operation,
  commands: 3,
});

describe(`Agenda's job documents, as src/db/agenda-jobs.ts reads and writes them`, () => {
  it('the installed Agenda is the version these checks were made against', () => {
    const versions = { agenda: installed('agenda'), mongoBackend: installed('@agendajs/mongo-backend') };
    expect(
      versions,
      'Agenda was upgraded: check that src/db/agenda-jobs.ts still matches its job documents (this file), then update AGENDA_CHECKED',
    ).toEqual(AGENDA_CHECKED);
  });

  it('a job saved through Agenda has the fields and types the direct reads use, and insertNew stores the same document', async () => {
    const agenda = await agendaOn('saved');
    await agenda.create('check', data('a')).save();
    const saved = await db.collection('saved').findOne({});
    expect(saved?._id).toBeInstanceOf(ObjectId);
    expect(saved).toMatchObject({ name: 'check', data: data('a'), lockedAt: null, lastModifiedBy: null, disabled: null });
    expect(saved?.['nextRunAt']).toBeInstanceOf(Date);

    await new AgendaJobs<Data>(db, { collection: 'inserted', jobName: 'check' }).insertNew([
      agenda.create('check', data('a')).toJson(true),
    ]);
    const inserted = await db.collection('inserted').findOne({});
    const comparable = (doc: typeof saved) => ({ ...doc, _id: 'an ObjectId', nextRunAt: 'a Date' });
    expect(Object.keys(inserted ?? {}).sort()).toEqual(Object.keys(saved ?? {}).sort());
    expect(comparable(inserted)).toEqual(comparable(saved));
    expect(inserted?._id).toBeInstanceOf(ObjectId);
    expect(inserted?.['nextRunAt']).toBeInstanceOf(Date);
  });

  it('Agenda runs no job that lockDue locked; an unlocked one it runs, a removed one never', async () => {
    const jobs = new AgendaJobs<Data>(db, { collection: 'locking', jobName: 'chunk' });
    const agenda = await agendaOn('locking');
    await jobs.insertNew(['a', 'b', 'c'].map((id) => agenda.create('chunk', data(id)).toJson(true)));
    const locked = await jobs.lockDue({ merchantId: 'm1' }, 10, (waiting) => waiting.filter((d) => d.chunkId !== 'c'));
    expect(locked.jobs.map((j) => j.data.chunkId).sort()).toEqual(['a', 'b']);
    const before = await db
      .collection('locking')
      .find({ 'data.chunkId': { $in: ['a', 'b'] } })
      .toArray();
    for (const job of before) expect(job).toMatchObject({ lockedAt: expect.any(Date), lastModifiedBy: locked.token });

    const ran: string[] = [];
    agenda.define<Data>('chunk', async (job) => void ran.push(job.attrs.data.chunkId));
    await agenda.start();
    await waitFor(
      async () => ran,
      (r) => r.includes('c'),
      10_000,
      20,
      'the free job to run',
    );
    await sleep(300);
    // Distinct jobs: without an atomic conditional update (the embedded engine), Agenda's own lock can
    // let two of its polls take one free job, under load; a chunk's marks make that harmless (docs/design.md §6).
    expect([...new Set(ran)]).toEqual(['c']);

    await sleep(5);
    await jobs.renewLocked(locked);
    const renewed = await db
      .collection('locking')
      .find({ 'data.chunkId': { $in: ['a', 'b'] } })
      .toArray();
    for (const job of renewed) expect((job['lockedAt'] as Date).getTime()).toBeGreaterThan((before[0]!['lockedAt'] as Date).getTime());

    await jobs.removeLocked(locked, (d) => d.chunkId === 'b');
    await jobs.unlock(locked, (d) => d.chunkId === 'a');
    await waitFor(
      async () => ran,
      (r) => r.includes('a'),
      10_000,
      20,
      'the unlocked job to run',
    );
    await sleep(300);
    expect([...new Set(ran)].sort()).toEqual(['a', 'c']);
    expect(await db.collection('locking').countDocuments({ 'data.chunkId': 'b' })).toBe(0);
  });

  it('a job whose run has ended has nextRunAt null: only waiting jobs are unfinished, and anyDueBesides sees only the others', async () => {
    const jobs = new AgendaJobs<Data>(db, { collection: 'finishing', jobName: 'chunk' });
    const agenda = await agendaOn('finishing', { removeOnComplete: false });
    agenda.define<Data>('chunk', async () => undefined);
    await agenda.create('chunk', data('done')).save();
    await agenda.start();
    await waitFor(
      () => db.collection('finishing').findOne({ 'data.chunkId': 'done' }),
      (job) => job?.['lastFinishedAt'] instanceof Date,
      10_000,
      20,
      'the job to finish',
    );
    await agenda.stop(false);
    expect((await db.collection('finishing').findOne({ 'data.chunkId': 'done' }))?.['nextRunAt']).toBeNull();
    expect(await jobs.countUnfinished(100)).toBe(0);
    expect(await jobs.oldestUnfinishedAt()).toBeUndefined();

    const queuedFrom = Date.now();
    await jobs.insertNew([agenda.create('chunk', data('waiting')).toJson(true)]);
    expect(await jobs.countUnfinished(100)).toBe(1);
    expect(await jobs.oldestUnfinishedAt()).toBeGreaterThanOrEqual(Math.floor(queuedFrom / 1000) * 1000);
    expect(await jobs.anyDueBesides({ merchantId: 'm1', operation: 'PAUSE' })).toBe(false);
    await jobs.insertNew([agenda.create('chunk', data('other', 'm1', 'RESUME')).toJson(true)]);
    expect(await jobs.anyDueBesides({ merchantId: 'm1', operation: 'PAUSE' })).toBe(true);
  });
});
