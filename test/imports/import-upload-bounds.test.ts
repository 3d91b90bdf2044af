/**
 * An import's upload keeps its own bound (IMPORT_IDLE_TIMEOUT_MS, the longest wait for the next
 * bytes) in place of REQUEST_TIMEOUT_MS: a file sent slowly but steadily for longer than the
 * request timeout is accepted whole; one that stalls is refused with 408 and leaves no import.
 * Small timeouts are configured here, so that the test takes seconds, not the defaults' minutes.
 */
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../support/http.js';
import { startTestService, type TestService } from '../support/service.js';
import { waitFor } from '../support/wait.js';

const REQUEST_TIMEOUT_MS = 1_500;
const IMPORT_IDLE_TIMEOUT_MS = 1_000;

let t: TestService;
beforeAll(async () => {
  t = await startTestService({
    workers: 1,
    bulkPollIntervalMs: 50,
    headersTimeoutMs: 500,
    requestTimeoutMs: REQUEST_TIMEOUT_MS,
    importIdleTimeoutMs: IMPORT_IDLE_TIMEOUT_MS,
  });
});
afterAll(() => t?.close());

/** Sends the parts one by one, `gapMs` apart, as one streamed body. */
function paced(parts: readonly string[], gapMs: number): ReadableStream {
  async function* body(): AsyncGenerator<Buffer> {
    for (const [i, part] of parts.entries()) {
      if (i > 0) await sleep(gapMs);
      yield Buffer.from(part);
    }
  }
  return Readable.toWeb(Readable.from(body())) as ReadableStream;
}

const post = (apiKey: string, body: ReadableStream) =>
  fetch(`${t.baseUrl}/v2/subscription-imports`, {
    method: 'POST',
    headers: { 'x-api-key': apiKey, 'content-type': 'application/x-ndjson' },
    body,
    duplex: 'half',
  } as RequestInit);

describe('the upload of an import', () => {
  it('sent steadily for longer than REQUEST_TIMEOUT_MS, is accepted whole and applied', { timeout: 60_000 }, async () => {
    const { apiKey } = await t.merchant();
    const planId = randomUUID();
    // Ten parts, 400 ms apart: about 3.6 s in all, more than twice the request timeout, no gap near the idle bound.
    const parts = Array.from({ length: 10 }, (_, i) => `{"externalId":"slow-${i}","planId":"${planId}"}\n`);
    const started = Date.now();
    const res = await post(apiKey, paced(parts, 400));
    expect(Date.now() - started).toBeGreaterThan(2 * REQUEST_TIMEOUT_MS);
    expect(res.status).toBe(202);
    const { id } = (await res.json()) as { id: string };
    const done = await waitFor(
      () => call(t.baseUrl, `/v2/subscription-imports/${id}`, { method: 'GET', apiKey }),
      (r) => r.body.state === 'completed',
      30_000,
    );
    expect(done.body).toMatchObject({ rowCount: 10, createdCount: 10, rejectedCount: 0 });
  });

  it('that stalls for longer than IMPORT_IDLE_TIMEOUT_MS answers 408 0040, and leaves no import', { timeout: 60_000 }, async () => {
    const { apiKey, merchantId } = await t.merchant();
    const planId = randomUUID();
    const parts = [`{"externalId":"stalled-1","planId":"${planId}"}\n`, `{"externalId":"stalled-2","planId":"${planId}"}\n`];
    const res = await post(apiKey, paced(parts, 4 * IMPORT_IDLE_TIMEOUT_MS));
    expect(res.status).toBe(408);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    expect(((await res.json()) as { code: string }).code).toBe('0040');
    expect(await t.db.collection('subscriptionImports').countDocuments({ merchantId })).toBe(0);
  });
});
