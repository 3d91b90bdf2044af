/**
 * A CSV export (test/bulk/bulk-export.test.ts) when the database fails under it, reproduced through the
 * wire proxy: at its first read the answer is still a problem (503 0910); after the file has begun,
 * the download is cut short, so that the client sees an incomplete answer, never a shorter file
 * that looks whole.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { storedBulkRequest } from '../support/bulk.js';
import { startTestService, type TestService } from '../support/service.js';
import { startWireProxy, type WireProxy } from '../support/wire-proxy.js';

let proxy: WireProxy;
let t: TestService;
beforeAll(async () => {
  proxy = await startWireProxy(inject('mongoUri'));
  t = await startTestService({ serverUri: proxy.uri('unused'), dbTimeoutMs: 2_000 });
});
afterAll(async () => {
  await t?.close();
  await proxy?.close();
});

/** The chunk reads of an export; the driver retries a read once, so a fault is made on two in a row. */
const chunkReads = { command: 'find', collection: 'bulkChunks' } as const;
const csvOf = (apiKey: string, requestId: string) =>
  fetch(`${t.baseUrl}/v2/bulk-requests/${requestId}/items`, { headers: { 'x-api-key': apiKey, Accept: 'text/csv' } });

describe('a CSV export when the database fails', () => {
  it('at its first read, answers 503 0910 as problem+json, with no file begun', async () => {
    const { merchantId, apiKey } = await t.merchant();
    // More than the 3000 items sorted in memory: read 2000 at a time.
    const { requestId } = await storedBulkRequest(t.db, merchantId, 5000);
    const rule = proxy.on(chunkReads, { action: 'cut', times: 2 });
    try {
      const answer = await csvOf(apiKey, requestId);
      expect(answer.status).toBe(503);
      expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(answer.headers.get('content-disposition')).toBeNull();
      expect(await answer.json()).toMatchObject({ code: '0910' });
    } finally {
      rule.remove();
    }
  });

  it('after the file has begun, cuts the download short: the client cannot take it for a whole file', async () => {
    const { merchantId, apiKey } = await t.merchant();
    const { requestId } = await storedBulkRequest(t.db, merchantId, 5000);
    let reads = 0;
    // The second batch's read (and its retry) fail; the first went through.
    const rule = proxy.on({ ...chunkReads, match: () => ++reads >= 2 }, { action: 'cut', times: 2 });
    try {
      const answer = await csvOf(apiKey, requestId);
      expect(answer.status).toBe(200);
      const read = await answer.text().then(
        (text) => ({ complete: true, rows: text.split('\r\n').length - 2 }),
        (error: Error) => ({ complete: false, error: error.message }),
      );
      expect(read).toEqual({ complete: false, error: expect.any(String) });
      expect(rule.hits).toBe(2);
    } finally {
      rule.remove();
    }
    // And the next download, the database answering again, is whole.
    const again = await (await csvOf(apiKey, requestId)).text();
    expect(again.split('\r\n')).toHaveLength(5002);
  });
});
