/**
 * Imports of subscriptions from a file, through HTTP (src/imports/): the upload's 202, the upsert by
 * externalId, the counts and rejected rows, the events, the limits; and a worker killed with SIGKILL
 * mid-import, after which another applies every row once in effect.
 */
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../support/http.js';
import { databaseUri, startTestService, type TestService } from '../support/service.js';
import { waitFor } from '../support/wait.js';
import { FLEET_ON_ONE_DATABASE, startServe, startWorker } from '../support/worker-process.js';

let t: TestService;
let http: TestService;
beforeAll(async () => {
  t = await startTestService({ workers: 1, bulkPollIntervalMs: 50 });
  http = await startTestService({ workers: 0 });
});
afterAll(async () => {
  await http?.close();
  await t?.close();
});

const request = (service: TestService, key: string, method: string, path: string, json?: unknown, headers: Record<string, string> = {}) =>
  call(service.baseUrl, path, { method, apiKey: key, json, headers });
const upload = (service: TestService, key: string, body: string, type = 'application/x-ndjson', query = '') =>
  call(service.baseUrl, `/v2/subscription-imports${query}`, {
    method: 'POST',
    apiKey: key,
    rawBody: body,
    headers: { 'content-type': type },
  });
const ndjson = (rows: readonly unknown[]) => rows.map((r) => (typeof r === 'string' ? r : JSON.stringify(r))).join('\n') + '\n';
const importDone = (service: TestService, key: string, id: string, timeoutMs = 60_000) =>
  waitFor(
    () => request(service, key, 'GET', `/v2/subscription-imports/${id}`),
    (res) => res.body.state === 'completed',
    timeoutMs,
    100,
  );

describe('POST /v2/subscription-imports', () => {
  it('upserts by externalId: creates, updates, cancels, leaves a differing status, rejects bad and repeated rows with their lines', async () => {
    const { apiKey } = await t.merchant();
    const known = (await request(t, apiKey, 'POST', '/v2/subscriptions', { externalId: 'known', planId: randomUUID(), cycle: 1 })).body;
    const paused = (await request(t, apiKey, 'POST', '/v2/subscriptions', { externalId: 'paused', planId: randomUUID(), status: 'paused' }))
      .body;
    const ending = (await request(t, apiKey, 'POST', '/v2/subscriptions', { externalId: 'ending', planId: randomUUID() })).body;
    const planId = randomUUID();
    const file = ndjson([
      { externalId: 'new-1', planId, cycle: 2, metadata: { crm: 'A' } },
      { externalId: 'known', planId, cycle: 5 },
      { externalId: 'bad', planId: 'nope' },
      'not json',
      { externalId: 'new-1', planId },
      { externalId: 'paused', planId: paused.planId, status: 'fulfilled' },
      { externalId: 'ending', planId: ending.planId, status: 'cancelled' },
    ]);
    const res = await upload(t, apiKey, file);
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ state: 'queued', livemode: true });
    expect(res.headers.get('location')).toBe(`/v2/subscription-imports/${res.body.id}`);
    const done = (await importDone(t, apiKey, res.body.id)).body;
    expect(done).toMatchObject({ rowCount: 7, createdCount: 1, updatedCount: 2, unchangedCount: 1, rejectedCount: 3 });
    expect(done.completedAt).not.toBeNull();
    const rejected = await request(t, apiKey, 'GET', `/v2/subscription-imports/${res.body.id}/rows?outcome=rejected`);
    expect(rejected.body.data.map((r: any) => [r.line, r.externalId, r.outcome])).toEqual([
      [3, 'bad', 'rejected'],
      [4, undefined, 'rejected'],
      [5, 'new-1', 'rejected'],
    ]);
    expect(rejected.body.data.map((r: any) => r.reason)).toEqual([
      'planId: not a UUID',
      'not a JSON object',
      'externalId: named by an earlier line of this file',
    ]);
    const unchanged = await request(t, apiKey, 'GET', `/v2/subscription-imports/${res.body.id}/rows?outcome=unchanged`);
    expect(unchanged.body.data).toEqual([
      { line: 6, externalId: 'paused', subscriptionId: paused.id, outcome: 'unchanged', reason: 'status_differs', livemode: true },
    ]);
    const found = (externalId: string) =>
      request(t, apiKey, 'GET', `/v2/subscriptions?externalId=${externalId}`).then((r) => r.body.data[0]);
    const created = await request(t, apiKey, 'GET', `/v2/subscription-imports/${res.body.id}/rows?outcome=created`);
    expect(created.body.data).toEqual([
      { line: 1, externalId: 'new-1', subscriptionId: (await found('new-1')).id, outcome: 'created', livemode: true },
    ]);
    const rowsPage = (after?: string) =>
      request(t, apiKey, 'GET', `/v2/subscription-imports/${res.body.id}/rows?limit=3${after ? `&startingAfter=${after}` : ''}`);
    const first = (await rowsPage()).body;
    expect(first.data.map((r: any) => [r.line, r.outcome])).toEqual([
      [1, 'created'],
      [2, 'updated'],
      [3, 'rejected'],
    ]);
    const second = (await rowsPage(first.nextCursor)).body;
    expect(second.data.map((r: any) => [r.line, r.outcome])).toEqual([
      [4, 'rejected'],
      [5, 'rejected'],
      [6, 'unchanged'],
    ]);
    expect(second.hasMore).toBe(true);
    expect(await found('new-1')).toMatchObject({ planId, cycle: 2, metadata: { crm: 'A' }, status: 'fulfilled' });
    expect(await found('known')).toMatchObject({ id: known.id, planId, cycle: 5 });
    expect(await found('paused')).toMatchObject({ status: 'paused' });
    expect(await found('ending')).toMatchObject({ status: 'cancelled' });
    const csv = await call(t.baseUrl, `/v2/subscription-imports/${res.body.id}/rows`, {
      method: 'GET',
      apiKey,
      headers: { Accept: 'text/csv' },
    });
    expect(csv.body.split('\r\n')).toHaveLength(9);
  });

  it('reads CSV with metadata columns; one subscription_import.completed event with the counts, and no event per row', async () => {
    const { apiKey } = await t.merchant();
    const planId = randomUUID();
    const file = `externalId,planId,status,cycle,metadata.crm\r\nc-1,${planId},fulfilled,3,A-1\r\n"c,2",${planId},,,\r\nc-3,${planId},gone,1,\r\n`;
    const res = await upload(t, apiKey, file, 'text/csv');
    expect(res.status).toBe(202);
    expect((await importDone(t, apiKey, res.body.id)).body).toMatchObject({ rowCount: 3, createdCount: 2, rejectedCount: 1 });
    const one = (await request(t, apiKey, 'GET', '/v2/subscriptions?externalId=c-1')).body.data[0];
    expect(one).toMatchObject({ cycle: 3, metadata: { crm: 'A-1' } });
    expect((await request(t, apiKey, 'GET', `/v2/subscriptions?externalId=${encodeURIComponent('c,2')}`)).body.data).toHaveLength(1);
    const events = await waitFor(
      () => request(t, apiKey, 'GET', '/v2/events?limit=100'),
      (r) => r.body.data.some((e: any) => e.type === 'subscription_import.completed'),
      20_000,
    );
    expect(events.body.data.map((e: any) => e.type)).toEqual(['subscription_import.completed']);
    expect(events.body.data[0].data).toMatchObject({ id: res.body.id, createdCount: 2, rejectedCount: 1 });
  });

  it('reads RFC 4180 CSV: quoted fields spanning lines, doubled quotes; rejected rows keep the file’s line numbers', async () => {
    const { apiKey } = await t.merchant();
    const planId = randomUUID();
    const file = [
      'externalId,planId,metadata.note',
      `m-1,${planId},"first line\r\nsecond ""quoted"" line"`,
      `m-2,${planId},plain`,
      'm-3,nope,x',
      `"m-4",${planId},"a\nb\nc"`,
      `m-5,${planId}`,
      `m-6,${planId},"never closed`,
      'and more',
    ].join('\r\n');
    const res = await upload(t, apiKey, file, 'text/csv');
    expect(res.status).toBe(202);
    const done = (await importDone(t, apiKey, res.body.id)).body;
    expect(done).toMatchObject({ rowCount: 6, createdCount: 3, rejectedCount: 3 });
    const rows = (await request(t, apiKey, 'GET', `/v2/subscription-imports/${res.body.id}/rows`)).body.data;
    expect(rows.map((r: any) => [r.line, r.externalId, r.outcome])).toEqual([
      [2, 'm-1', 'created'],
      [4, 'm-2', 'created'],
      [5, 'm-3', 'rejected'],
      [6, 'm-4', 'created'],
      [9, undefined, 'rejected'],
      [10, undefined, 'rejected'],
    ]);
    expect(rows.filter((r: any) => r.outcome === 'rejected').map((r: any) => r.reason)).toEqual([
      'planId: not a UUID',
      'not 3 CSV fields',
      'not valid CSV: a quoted field never closes',
    ]);
    const found = (await request(t, apiKey, 'GET', '/v2/subscriptions?externalId=m-1')).body.data[0];
    expect(found.metadata).toEqual({ note: 'first line\nsecond "quoted" line' });
    expect((await request(t, apiKey, 'GET', '/v2/subscriptions?externalId=m-4')).body.data[0].metadata).toEqual({ note: 'a\nb\nc' });
  });

  it('?events=all sends each row’s own event too: a created one’s, and an updated one’s naming what changed', async () => {
    const { apiKey } = await t.merchant();
    const known = (await request(t, apiKey, 'POST', '/v2/subscriptions', { externalId: 'e-0', planId: randomUUID(), cycle: 1 })).body;
    const file = ndjson([
      { externalId: 'e-1', planId: randomUUID() },
      { externalId: 'e-0', planId: known.planId, cycle: 2 },
    ]);
    const res = await upload(t, apiKey, file, 'application/x-ndjson', '?events=all');
    await importDone(t, apiKey, res.body.id);
    const events = await waitFor(
      () => request(t, apiKey, 'GET', '/v2/events?limit=100'),
      (r) => r.body.data.length >= 4,
      20_000,
    );
    expect(events.body.data.map((e: any) => e.type).sort()).toEqual([
      'subscription.created',
      'subscription.created',
      'subscription.updated',
      'subscription_import.completed',
    ]);
    const updated = events.body.data.find((e: any) => e.type === 'subscription.updated');
    expect(updated.data).toMatchObject({ subscription: { id: known.id, cycle: 2 }, changed: ['cycle'] });
  });

  it('another content type answers 415 0041; more than 1,000,000 rows 413 0042 with nothing imported; an unknown import 404 0029', async () => {
    const { apiKey, merchantId } = await t.merchant();
    expect((await upload(t, apiKey, '{}', 'application/json')).body.code).toBe('0041');
    const tooMany = await upload(t, apiKey, 'x\n'.repeat(1_000_001));
    expect([tooMany.status, tooMany.body.code]).toEqual([413, '0042']);
    expect(await t.db.collection('subscriptionImports').countDocuments({ merchantId })).toBe(0);
    expect((await request(t, apiKey, 'GET', `/v2/subscription-imports/${randomUUID()}`)).body.code).toBe('0029');
    const other = await t.merchant();
    const mine = await upload(t, apiKey, ndjson([{ externalId: 'x', planId: randomUUID() }]));
    expect((await request(t, other.apiKey, 'GET', `/v2/subscription-imports/${mine.body.id}`)).body.code).toBe('0029');
  });
});

describe('a worker killed with SIGKILL mid-import', () => {
  it('leaves the rest to another worker, which applies every row once in effect', { timeout: 240_000 }, async () => {
    const { apiKey, merchantId } = await http.merchant();
    const rows = 5000;
    const planId = randomUUID();
    const res = await upload(http, apiKey, ndjson(Array.from({ length: rows }, (_, i) => ({ externalId: `k-${i}`, planId }))));
    expect(res.status).toBe(202);
    const uri = databaseUri(http.db.databaseName);
    const doomed = await startWorker(uri, { ...FLEET_ON_ONE_DATABASE, BULK_LOCK_LIFETIME_MS: '1000' });
    const imported = () => http.db.collection('subscriptions').countDocuments({ merchantId });
    await waitFor(imported, (n) => n >= 600, 120_000, 50);
    await doomed.stop('SIGKILL');
    expect(await imported()).toBeLessThan(rows);
    const rescuer = await startWorker(uri, { ...FLEET_ON_ONE_DATABASE, BULK_LOCK_LIFETIME_MS: '1000' });
    try {
      const done = (await importDone(http, apiKey, res.body.id, 180_000)).body;
      expect(done).toMatchObject({ rowCount: rows, createdCount: rows, rejectedCount: 0 });
      expect(await imported()).toBe(rows);
      const externalIds = await http.db.collection('subscriptions').distinct('externalId', { merchantId });
      expect(externalIds).toHaveLength(rows);
    } finally {
      await rescuer.stop();
    }
  });
});

describe('the serving process killed with SIGKILL mid-upload', () => {
  it('leaves no import: the file half stored is never an import, and nothing is applied', { timeout: 120_000 }, async () => {
    const { apiKey, merchantId } = await http.merchant();
    const serve = await startServe(databaseUri(http.db.databaseName), { ...FLEET_ON_ONE_DATABASE, BULK_CONCURRENCY: '0' });
    const planId = randomUUID();
    let sent = 0;
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    async function* file(): AsyncGenerator<Buffer> {
      // About 700 KB of rows, then nothing more until the process is gone.
      for (let i = 0; i < 10_000; i++) {
        const part = Buffer.from(`{"externalId":"cut-${i}","planId":"${planId}"}\n`);
        sent += part.length;
        yield part;
      }
      await held;
    }
    const answer = fetch(`${serve.baseUrl}/v2/subscription-imports`, {
      method: 'POST',
      headers: { 'x-api-key': apiKey, 'content-type': 'application/x-ndjson' },
      body: Readable.toWeb(Readable.from(file())) as ReadableStream,
      duplex: 'half',
    } as RequestInit).then(
      (res) => res.status,
      () => 'connection lost' as const,
    );
    // Part of the file is in storage: the upload is under way.
    await waitFor(
      () => http.db.collection('subscriptionImportFiles.chunks').countDocuments(),
      (n) => n > 0,
      60_000,
      50,
    );
    expect(sent).toBeGreaterThan(0);
    await serve.stop('SIGKILL');
    release();
    expect(await answer).toBe('connection lost');
    expect(await http.db.collection('subscriptionImports').countDocuments({ merchantId })).toBe(0);
    expect(await http.db.collection('subscriptions').countDocuments({ merchantId })).toBe(0);
  });
});
