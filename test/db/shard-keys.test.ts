/**
 * Shard-ready data access (docs/sharding.md): every command the hot paths send on the wire to a
 * merchant-owned collection carries `merchantId` in its filter (and every document inserted
 * there has one), so that `{merchantId: 1, _id: 1}` can be the shard key and each such command
 * goes to one shard. The background scans that cannot name a merchant are listed here by name,
 * and each one's shape is checked, so that a new scan must be added on purpose. Every other
 * filter the hot paths send is served by an index on the engine in use (its plan, explained).
 *
 * Recorded through the wire proxy (test/support/wire-proxy.ts): what the driver really sent.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Document } from 'mongodb';
import { call } from '../support/http.js';
import { READS_EVERYTHING } from '../support/plans.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { startTestService, type TestService } from '../support/service.js';
import { waitFor } from '../support/wait.js';
import { startWireProxy, type WireCommand, type WireProxy } from '../support/wire-proxy.js';

/** The collections a merchant owns; `_id`-only access to them cannot be routed to one shard. */
const MERCHANT_OWNED = new Set([
  'subscriptions',
  'bulkRequests',
  'bulkChunks',
  'bulkChunksFinished',
  'events',
  'idempotencyKeys',
  'webhookEndpoints',
  'webhookDeliveries',
  'holds',
  'portalLinks',
  'plans',
  'pauses',
  'pauseDays',
  'pauseDayParts',
  'pauseSteps',
  'subscriptionExternalIds',
]);

/** The scans that cannot name a merchant: background work, bounded (docs/sharding.md). */
const BACKGROUND_SCANS: { name: string; collection: string; matches: (filter: Document) => boolean }[] = [
  {
    name: 'due schedules (due.store due/earliestScheduled)',
    collection: 'subscriptions',
    matches: (f) => keys(f).join() === 'nextScheduledAt',
  },
  {
    name: 'events outbox sweep (outbox.store outboxes)',
    collection: 'subscriptions',
    matches: (f) => keys(f).join() === 'outbox.key',
  },
  {
    name: 'straggler bulk requests (bulk.repository undispatchedBefore)',
    collection: 'bulkRequests',
    matches: (f) => keys(f).sort().join() === 'createdAt,dispatchedAt',
  },
  {
    name: 'overdue deliveries (deliveries.repository overdue)',
    collection: 'webhookDeliveries',
    matches: (f) => keys(f).sort().join() === 'dueAt,status',
  },
  {
    // A boolean equality: MongoDB's index serves it, FerretDB's SQLite backend reads the (small) collection.
    name: 'event destinations with events waiting (destinations.repository due)',
    collection: 'eventDestinations',
    matches: (f) => keys(f).join() === 'hasWaiting',
  },
  {
    name: 'holds due for release (holds.repository due)',
    collection: 'holds',
    matches: (f) => keys(f).join() === 'releaseAt',
  },
  {
    name: "holds' notices due (holds.repository noticesDue)",
    collection: 'holds',
    matches: (f) => keys(f).sort().join() === 'coveringSince,liveNoticeAt,placeUnstoredSince',
  },
  {
    name: 'hold releases a stopped process left unstored (holds.repository releasesUnstored)',
    collection: 'holds',
    matches: (f) => keys(f).join() === 'releaseUnstoredSince',
  },
  {
    name: 'hold placings a stopped process left unstored (holds.repository placesUnstored)',
    collection: 'holds',
    matches: (f) => keys(f).join() === 'placeUnstoredSince',
  },
  { name: 'retention (deleteExpired everywhere)', collection: '*', matches: (f) => keys(f).join() === 'expiresAt' },
  {
    name: 'imports a worker may take (imports.store lease), one at a time',
    collection: 'subscriptionImports',
    matches: (f) => keys(f).sort().join() === '$or,state',
  },
  {
    name: 'live processes (fleet heartbeat), when a heartbeat falls within the recording',
    collection: 'processes',
    matches: (f) => keys(f).join() === 'lastSeenAt',
  },
  {
    name: 'retention of portal links (portal-links.repository deleteExpired)',
    collection: 'portalLinks',
    matches: (f) => keys(f).join() === 'removeAt',
  },
];

/**
 * Point reads that cannot name a merchant because the request names none: a customer's portal page
 * knows only its token (docs/sharding.md). Served by an index, and checked below like the rest.
 */
const UNSCOPED_LOOKUPS: typeof BACKGROUND_SCANS = [
  {
    name: "a portal page's link by its token hash (portal-links.repository findByTokenHash)",
    collection: 'portalLinks',
    matches: (f) => keys(f).join() === 'tokenHash',
  },
];

const keys = (filter: Document) => Object.keys(filter ?? {});

/** Whether the filter names one merchant: merchantId at the top, or in every branch of an $and/$or. */
function hasMerchant(filter: Document | undefined): boolean {
  if (!filter) return false;
  if (typeof filter.merchantId === 'string') return true;
  if (Array.isArray(filter.$and) && filter.$and.some(hasMerchant)) return true;
  if (Array.isArray(filter.$or) && filter.$or.length > 0 && filter.$or.every(hasMerchant)) return true;
  return false;
}

/** The filters (or inserted documents) of one command, by what its kind carries. */
function filtersOf(command: WireCommand): { kind: 'filter' | 'document'; value: Document }[] {
  const body = command.body;
  switch (command.name) {
    case 'find':
    case 'count':
    case 'distinct':
      return [{ kind: 'filter', value: body.filter ?? body.query ?? {} }];
    case 'findAndModify':
      return [{ kind: 'filter', value: body.query ?? {} }];
    case 'update':
      return (body.updates as Document[]).map((u) => ({ kind: 'filter' as const, value: u.q }));
    case 'delete':
      return (body.deletes as Document[]).map((d) => ({ kind: 'filter' as const, value: d.q }));
    case 'aggregate':
      return [{ kind: 'filter', value: (body.pipeline as Document[])[0]?.$match ?? {} }];
    case 'insert':
      return (body.documents as Document[]).map((d) => ({ kind: 'document' as const, value: d }));
    default:
      return [];
  }
}

let proxy: WireProxy;
let t: TestService;
let receiver: Receiver;
const recorded: WireCommand[] = [];

beforeAll(async () => {
  proxy = await startWireProxy(inject('mongoUri'));
  // Records every command and acts on none.
  proxy.on({ match: (command) => (recorded.push(command), false) }, { action: 'hold', ms: 0 });
  t = await startTestService({ serverUri: proxy.uri('unused'), workers: 2, schedulePollMs: 100, webhookRetryDelaysMs: [200] });
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver?.close();
  await t?.close();
  await proxy?.close();
});

describe('every hot-path command on a merchant-owned collection carries merchantId, and every hot-path filter is served by an index', () => {
  it('single and bulk changes, reads, lists, idempotency, events, webhooks and deliveries', { timeout: 120_000 }, async () => {
    const { merchantId, apiKey } = await t.merchant();
    const api = (method: string, path: string, json?: unknown, headers?: Record<string, string>) =>
      call(t.baseUrl, path, { method, apiKey, json, headers });
    const endpoint = await api('POST', '/v2/webhook-endpoints', { url: receiver.url, events: ['*'] });
    expect(endpoint.status).toBe(201);
    receiver.secret = endpoint.body.secret;
    const ids = await t.seed(merchantId, 5);
    recorded.length = 0;

    expect((await api('POST', `/v2/subscriptions/${ids[0]}/pause`, undefined, { 'Idempotency-Key': 'k-1' })).status).toBe(200);
    expect(
      (await api('POST', `/v2/subscriptions/${ids[0]}/pause`, undefined, { 'Idempotency-Key': 'k-1' })).headers.get('idempotent-replayed'),
    ).toBe('true');
    expect((await api('POST', `/v2/subscriptions/${ids[0]}/resume`)).status).toBe(200);
    expect((await api('GET', `/v2/subscriptions/${ids[1]}`)).status).toBe(200);
    expect((await api('GET', '/v2/subscriptions?limit=2')).status).toBe(200);
    const bulk = await api('POST', '/v2/subscriptions/bulk/pause', { subscriptions: ids.slice(1, 4) }, { 'Idempotency-Key': 'k-2' });
    expect(bulk.status).toBe(202);
    const requestId = bulk.body.requestId;
    const done = await waitFor(
      () => api('GET', `/v2/bulk-requests/${requestId}`),
      (r) => r.body.state === 'completed',
      30_000,
    );
    expect(done.body.state).toBe('completed');
    expect((await api('GET', `/v2/bulk-requests/${requestId}/items`)).status).toBe(200);
    expect((await api('GET', `/v2/bulk-requests/${requestId}/items`, undefined, { Accept: 'text/csv' })).body.split('\r\n')).toHaveLength(
      5,
    );
    expect((await api('GET', '/v2/bulk-requests')).status).toBe(200);
    expect((await api('PATCH', `/v2/webhook-endpoints/${endpoint.body.id}`, { description: 'wire check' })).status).toBe(200);
    // A pause, a resume, 3 bulk pauses and the bulk's completion: 6 events, delivered (at least once: counted by id).
    await waitFor(
      async () => new Set(receiver.received.map((r) => r.id)).size,
      (n) => n >= 6,
      30_000,
    );
    const events = await api('GET', '/v2/events?limit=100');
    expect(events.status).toBe(200);
    expect((await api('GET', `/v2/events/${events.body.data[0].id}`)).status).toBe(200);
    expect((await api('GET', `/v2/events?subscriptionId=${ids[1]}&type=subscription.paused`)).body.data).toHaveLength(1);
    expect((await api('GET', `/v2/events?requestId=${requestId}&limit=2`)).body.data).toHaveLength(2);
    expect((await api('GET', `/v2/events?requestId=${requestId}&subscriptionId=${ids[2]}`)).body.data).toHaveLength(1);
    expect((await api('GET', `/v2/webhook-endpoints/${endpoint.body.id}/deliveries`)).status).toBe(200);
    expect((await api('DELETE', `/v2/webhook-endpoints/${endpoint.body.id}`)).status).toBe(204);
    const link = await api('POST', `/v2/subscriptions/${ids[4]}/portal-links`);
    expect(link.status).toBe(201);
    expect((await api('GET', `/v2/portal-links?subscriptionId=${ids[4]}`)).status).toBe(200);
    const { planId } = (await api('GET', `/v2/subscriptions/${ids[4]}`)).body;
    expect((await api('PUT', `/v2/plans/${planId}`, { name: 'Gold' })).status).toBe(200);
    expect((await api('GET', `/v2/plans/${planId}`)).status).toBe(200);
    expect((await api('GET', `/v2/plans?startingAfter=${randomUUID()}`)).status).toBe(200);
    expect((await api('GET', '/v2/analytics/pauses?groupBy=cause')).status).toBe(200);
    expect((await api('GET', '/v2/analytics/resumes')).status).toBe(200);
    // The page reads the plan's name too.
    const csrf = /name="csrf" value="([^"]*)"/.exec(await (await fetch(link.body.url)).text())?.[1];
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const posted = await fetch(`${link.body.url}/pause`, {
      method: 'POST',
      headers: form,
      body: `csrf=${csrf}&days=7`,
      redirect: 'manual',
    });
    expect(posted.status).toBe(303);
    expect((await api('GET', '/v2/portal-links')).status).toBe(200);
    expect((await api('DELETE', `/v2/portal-links/${link.body.id}`)).status).toBe(204);
    // A subscription's lifecycle: created, found by its externalId, patched, cancelled (src/subscriptions/lifecycle.ts).
    const externalId = `sub_${randomUUID()}`;
    const created = await api('POST', '/v2/subscriptions', { externalId, planId: randomUUID() });
    expect(created.status).toBe(201);
    expect((await api('POST', '/v2/subscriptions', { externalId, planId: randomUUID() })).status).toBe(409);
    expect((await api('GET', `/v2/subscriptions?externalId=${externalId}`)).body.data).toHaveLength(1);
    const patched = await call(t.baseUrl, `/v2/subscriptions/${created.body.id}`, {
      method: 'PATCH',
      apiKey,
      rawBody: JSON.stringify({ cycle: 2, externalId: `${externalId}-2` }),
      headers: { 'content-type': 'application/merge-patch+json' },
    });
    expect(patched.status).toBe(200);
    expect((await api('POST', `/v2/subscriptions/${created.body.id}/cancel`)).status).toBe(200);

    const offending: string[] = [];
    const scans = new Map<string, number>();
    for (const command of recorded) {
      if (!command.collection || !MERCHANT_OWNED.has(command.collection)) continue;
      for (const { kind, value } of filtersOf(command)) {
        if (kind === 'document' ? typeof value.merchantId === 'string' : hasMerchant(value)) continue;
        const scan =
          kind === 'filter'
            ? [...BACKGROUND_SCANS, ...UNSCOPED_LOOKUPS].find(
                (s) => (s.collection === '*' || s.collection === command.collection) && s.matches(value),
              )
            : undefined;
        if (scan) scans.set(scan.name, (scans.get(scan.name) ?? 0) + 1);
        else offending.push(`${command.name} ${command.collection} ${JSON.stringify(value).slice(0, 200)}`);
      }
    }
    console.log(
      `wire check: ${recorded.length} commands recorded; background scans without merchantId (named): ${JSON.stringify(Object.fromEntries(scans))}`,
    );
    expect(recorded.filter((c) => c.collection === 'subscriptions').length).toBeGreaterThan(0);
    expect([...new Set(offending)]).toEqual([]);

    // And each of those filters (one per command, collection and set of fields) is served by an
    // index on the engine in use, the named background scans aside: its plan as a find, on MongoDB
    // an IXSCAN, on FerretDB (SQLite) `SEARCH … USING INDEX`, where reading everything shows as
    // COLLSCAN or `SCAN <table>`. Until 2026-11-25 the relay's read of several merchants'
    // outboxes, an $or, read every subscription on FerretDB (test/db/index-reads.test.ts).
    const shapes = new Map<string, { collection: string; filter: Document }>();
    for (const command of recorded) {
      if (!command.collection) continue;
      for (const { kind, value } of filtersOf(command)) {
        if (
          kind !== 'filter' ||
          BACKGROUND_SCANS.some((s) => (s.collection === '*' || s.collection === command.collection) && s.matches(value))
        )
          continue;
        shapes.set(`${command.name} ${command.collection} ${keys(value).sort().join()}`, { collection: command.collection, filter: value });
      }
    }
    const unindexed: string[] = [];
    for (const [shape, { collection, filter }] of shapes) {
      const plan = JSON.stringify((await t.db.collection(collection).find(filter).explain()).queryPlanner);
      if (READS_EVERYTHING.test(plan)) unindexed.push(`${shape}: ${plan.slice(0, 200)}`);
    }
    console.log(`index check: ${shapes.size} filter shapes explained, ${unindexed.length} read everything`);
    expect(shapes.size).toBeGreaterThan(20);
    expect(unindexed).toEqual([]);
  });
});
