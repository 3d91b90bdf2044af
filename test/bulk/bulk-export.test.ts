/**
 * A bulk request's outcomes as a file (issue 46 §6): `GET /v2/bulk-requests/{id}/items` with
 * `Accept: text/csv` answers every item as CSV, streamed; JSON stays the default.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { csvStream } from '../../src/bulk/bulk.export.js';
import { BulkRepository } from '../../src/bulk/bulk.repository.js';
import { BulkStatusService } from '../../src/bulk/bulk.status.js';
import { storedBulkRequest } from '../support/bulk.js';
import { httpOf } from '../support/http.js';
import { startTestService, type TestService } from '../support/service.js';

let t: TestService;
beforeAll(async () => {
  t = await startTestService({ workers: 1, bulkPollIntervalMs: 50 });
});
afterAll(async () => {
  await t?.close();
});

const CSV = { Accept: 'text/csv' };
setFlagsFromString('--expose-gc');
/** A full collection, so that a heap measure counts what is held, not garbage not yet collected. */
const gc = runInNewContext('gc') as () => void;
const { api, completed } = httpOf(() => t);
const HEADER = 'subscriptionId,outcome,reason,at';

/** The file's rows after its header, each split on commas (the rows these tests read have no quoted field). */
function rowsOf(csv: string): string[][] {
  expect(csv.endsWith('\r\n')).toBe(true);
  const [header, ...rows] = csv.slice(0, -2).split('\r\n');
  expect(header).toBe(HEADER);
  return rows.map((row) => row.split(','));
}

const storedRequest = (merchantId: string, count: number, outcomeOf?: Parameters<typeof storedBulkRequest>[3]) =>
  storedBulkRequest(t.db, merchantId, count, outcomeOf);

describe('GET /v2/bulk-requests/{id}/items as CSV', () => {
  it('answers every item in subscription id order, as an attachment, with reasons and times; JSON without Accept', async () => {
    const { merchantId, apiKey } = await t.merchant();
    const active = await t.seed(merchantId, 4);
    const [paused] = await t.seed(merchantId, 1, 'paused');
    // Sent in reverse id order.
    const listed = [...active, paused!].sort().reverse();
    const bulk = await api(apiKey, 'POST', '/v2/subscriptions/bulk/pause', { subscriptions: listed });
    expect(bulk.status).toBe(202);
    await completed(apiKey, bulk.body.requestId);

    const file = await api(apiKey, 'GET', `/v2/bulk-requests/${bulk.body.requestId.toUpperCase()}/items`, undefined, CSV);
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(file.headers.get('content-disposition')).toBe(`attachment; filename="bulk-request-${bulk.body.requestId}.csv"`);
    const json = await api(apiKey, 'GET', `/v2/bulk-requests/${bulk.body.requestId}/items?limit=100`);
    expect(json.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(json.headers.get('content-disposition')).toBeNull();
    // The same items as the JSON list, field for field.
    expect(rowsOf(file.body)).toEqual(json.body.data.map((i: any) => [i.subscriptionId, i.outcome, i.reason ?? '', i.at ?? '']));
    expect(rowsOf(file.body).map(([id, outcome, reason]) => [id, outcome, reason])).toEqual(
      [...listed].sort().map((id) => [id, id === paused ? 'noop' : 'applied', '']),
    );
    expect(rowsOf(file.body).every(([, , , at]) => /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/.test(at!))).toBe(true);
  });

  it('with outcome, only those items; limit and startingAfter do not cut it', async () => {
    const { merchantId, apiKey } = await t.merchant();
    const active = await t.seed(merchantId, 3);
    const [paused] = await t.seed(merchantId, 1, 'paused');
    const bulk = await api(apiKey, 'POST', '/v2/subscriptions/bulk/resume', { subscriptions: [...active, paused] });
    await completed(apiKey, bulk.body.requestId);
    const items = (query: string) => api(apiKey, 'GET', `/v2/bulk-requests/${bulk.body.requestId}/items${query}`, undefined, CSV);
    expect(rowsOf((await items('?outcome=applied')).body)).toEqual([[paused, 'applied', '', expect.any(String)]]);
    expect(rowsOf((await items('?outcome=failed')).body)).toEqual([]);
    expect(rowsOf((await items(`?limit=1&startingAfter=${active[0]}`)).body)).toHaveLength(4);
  });

  it('prefers what Accept prefers: JSON for */*, CSV when it is weighted first', async () => {
    const { merchantId, apiKey } = await t.merchant();
    const bulk = await api(apiKey, 'POST', '/v2/subscriptions/bulk/pause', { subscriptions: await t.seed(merchantId, 2) });
    await completed(apiKey, bulk.body.requestId);
    const as = async (accept: string) =>
      (await api(apiKey, 'GET', `/v2/bulk-requests/${bulk.body.requestId}/items`, undefined, { Accept: accept })).headers.get(
        'content-type',
      );
    expect(await as('*/*')).toBe('application/json; charset=utf-8');
    expect(await as('application/json, text/csv;q=0.5')).toBe('application/json; charset=utf-8');
    expect(await as('application/json;q=0.1, text/csv')).toBe('text/csv; charset=utf-8');
  });

  it('quotes a reason that holds a comma, a quote or a line break (RFC 4180)', async () => {
    const { merchantId, apiKey } = await t.merchant();
    const reasons = ['not_found', 'timeout, retried', 'said "no"', 'two\r\nlines'];
    const { requestId, ids } = await storedRequest(merchantId, 4, (i) => ({
      outcome: i === 0 ? 'skipped' : 'failed',
      reason: reasons[i]!,
    }));
    const file = await api(apiKey, 'GET', `/v2/bulk-requests/${requestId}/items`, undefined, CSV);
    const at = file.body.split('\r\n')[1].split(',')[3];
    const rows = [
      `${ids[0]},skipped,not_found,${at}`,
      `${ids[1]},failed,"timeout, retried",${at}`,
      `${ids[2]},failed,"said ""no""",${at}`,
      `${ids[3]},failed,"two\r\nlines",${at}`,
    ];
    expect(file.body).toBe(`${HEADER}\r\n${rows.join('\r\n')}\r\n`);
  });

  it("answers 404 0022 as problem+json for another merchant's request, with Accept: text/csv", async () => {
    const { merchantId, apiKey } = await t.merchant();
    const bulk = await api(apiKey, 'POST', '/v2/subscriptions/bulk/pause', { subscriptions: await t.seed(merchantId, 1) });
    const stranger = await t.merchant();
    const answer = await api(stranger.apiKey, 'GET', `/v2/bulk-requests/${bulk.body.requestId}/items`, undefined, CSV);
    expect(answer.status).toBe(404);
    expect(answer.headers.get('content-type')).toContain('application/problem+json');
    expect(answer.body.code).toBe('0022');
  });

  it(
    'a filter request of 4000 subscriptions arrives complete, in id order, while pending and once applied',
    { timeout: 120_000 },
    async () => {
      const { merchantId, apiKey } = await t.merchant();
      const ids = (await t.seed(merchantId, 4000)).sort();
      const bulk = await api(apiKey, 'POST', '/v2/subscriptions/bulk/pause', { filter: {} });
      expect(bulk.body.acceptedCount).toBe(4000);
      const file = async () => rowsOf((await api(apiKey, 'GET', `/v2/bulk-requests/${bulk.body.requestId}/items`, undefined, CSV)).body);
      // Whatever the request's progress, every item is there once, in order.
      const early = await file();
      expect(early.map(([id]) => id)).toEqual(ids);
      await completed(apiKey, bulk.body.requestId, 90_000);
      const rows = await file();
      expect(rows.map(([id]) => id)).toEqual(ids);
      expect(new Set(rows.map(([, outcome]) => outcome))).toEqual(new Set(['applied']));
    },
  );

  it('streams a request of 100,000 items in order, holding a batch, never the file', { timeout: 120_000 }, async () => {
    const { merchantId, apiKey } = await t.merchant();
    const { requestId, ids } = await storedRequest(merchantId, 100_000);
    const started = performance.now();
    const response = await fetch(`${t.baseUrl}/v2/bulk-requests/${requestId}/items`, { headers: { 'x-api-key': apiKey, ...CSV } });
    expect(response.status).toBe(200);
    // Read as it arrives, keeping only the count and the order.
    let rows = -1;
    let last = '';
    let ordered = true;
    let rest = '';
    let bytes = 0;
    const decoder = new TextDecoder();
    for await (const part of response.body!) {
      bytes += part.length;
      const lines = (rest + decoder.decode(part, { stream: true })).split('\r\n');
      rest = lines.pop()!;
      for (const line of lines) {
        rows += 1;
        const id = line.slice(0, 36);
        if (rows > 0 && id <= last) ordered = false;
        if (rows > 0) last = id;
      }
    }
    const ms = performance.now() - started;
    expect(rest).toBe('');
    expect(rows).toBe(100_000);
    expect(ordered).toBe(true);
    expect(last).toBe(ids.at(-1));

    // What the service's side holds while it writes the file: read slowly from the stream itself
    // (over loopback, the kernel's socket buffers would take most of a 7 MB file, hiding a body
    // built whole), with a full collection before each measure, so that only what is held counts.
    const status = new BulkStatusService(new BulkRepository(t.db, 86_400_000));
    gc();
    const base = process.memoryUsage();
    const stream = await csvStream((await status.itemBatches(merchantId, requestId, undefined)).batches);
    let held = 0;
    let parts = 0;
    for await (const _part of stream) {
      if (parts++ % 10 !== 0) continue;
      gc();
      const now = process.memoryUsage();
      held = Math.max(held, now.heapUsed + now.external - base.heapUsed - base.external);
    }
    const mb = (n: number) => (n / 1_048_576).toFixed(1);
    console.log(
      `CSV of 100,000 items: ${mb(bytes)} MB in ${Math.round(ms)} ms over HTTP; at most ${mb(held)} MB held while written (${parts} parts)`,
    );
    // One batch and the driver's buffers (2.4 MB measured), where building the body whole held 11.5 MB.
    expect(held).toBeLessThan(bytes / 2);
  });
});
