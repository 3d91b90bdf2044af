/**
 * Concurrent single changes to one subscription from two services (two database clients, as two
 * processes have) on one database. MongoDB's conditional update is atomic: exactly one request
 * changes it and every answer agrees with what is stored. FerretDB v1 queries, then writes by
 * _id, so across processes two requests can both change it: there the exactly-once test is
 * skipped (saying why), and the one beside it asserts what FerretDB does give (every answer and
 * the stored status right) and prints how often two requests both changed it: a limit of the
 * engine, not something the service can fix.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { call } from '../support/http.js';
import { startTestService, type TestService } from '../support/service.js';

const ROUNDS = 20;
let a: TestService;
let b: TestService;
beforeAll(async () => {
  a = await startTestService();
  b = await startTestService({ databaseName: a.db.databaseName });
});
afterAll(async () => {
  await b?.close();
  await a?.close();
});

const atomic = inject('dbCapabilities').atomicConditionalUpdate;
const NOT_ATOMIC =
  'FerretDB v1 has no atomic conditional update across processes (it queries, then writes by _id), so two requests can both change ' +
  'a subscription; the test beside it asserts what FerretDB does give and measures the rest';
if (!atomic) console.log(`cross-process-races: one change per round is skipped: ${NOT_ATOMIC}`);

/** ROUNDS rounds of 6 concurrent pauses of one fresh subscription, alternating between the two services; every answer 200 and the stored status paused. */
async function rounds(): Promise<{ doubleChanges: number; backwards: number }> {
  const { merchantId, apiKey } = await a.merchant();
  let doubleChanges = 0;
  let backwards = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const [id] = await a.seed(merchantId, 1);
    const seeded = (await a.db.collection('subscriptions').findOne({ _id: id as never }))!.modifiedAt;
    const replies = await Promise.all([a, b, a, b, a, b].map((s) => call(s.baseUrl, `/v2/subscriptions/${id}/pause`, { apiKey })));
    expect(replies.map((r) => [r.status, r.body.status])).toEqual(Array(6).fill([200, 'paused']));
    const changedAt = new Set(replies.map((r) => r.body.modifiedAt).filter((m) => m !== seeded));
    const stored = (await a.db.collection('subscriptions').findOne({ _id: id as never }))!;
    expect(stored.status).toBe('paused');
    if (changedAt.size > 1) doubleChanges += 1;
    if ([...changedAt].some((m) => m > stored.modifiedAt)) backwards += 1;
  }
  return { doubleChanges, backwards };
}

describe('6 concurrent pauses of one subscription, split across two services', () => {
  it.skipIf(!atomic)(
    `${ROUNDS} rounds: exactly one change per round${atomic ? '' : ` (skipped: ${NOT_ATOMIC})`}`,
    { timeout: 240_000 },
    async () => {
      expect(await rounds()).toEqual({ doubleChanges: 0, backwards: 0 });
    },
  );

  it.runIf(!atomic)(
    `${ROUNDS} rounds on FerretDB: every answer is 200 paused and every round ends paused; double changes measured`,
    { timeout: 240_000 },
    async () => {
      const { doubleChanges, backwards } = await rounds();
      console.log(
        `FerretDB limit, measured: in ${doubleChanges} of ${ROUNDS} rounds two requests both reported a change (different modifiedAt); ` +
          `in ${backwards} the stored modifiedAt is older than one that was reported. The final status was right in every round.`,
      );
    },
  );
});
