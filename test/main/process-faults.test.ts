/**
 * Real `serve` processes behind the wire proxy (test/support/wire-proxy.ts), faults injected on
 * the wire: the process survives a failed write that a library does not await, recovers by
 * itself from an outage in which the database's port accepts and closes every connection, and
 * reports itself unhealthy when the database stays away.
 */
import { randomUUID } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { JOB_NAME, JOBS_COLLECTION } from '../../src/bulk/bulk.queue.js';
import { databaseUri } from '../support/service.js';
import { waitFor } from '../support/wait.js';
import { startServe, type ServeProcess } from '../support/worker-process.js';
import { startWireProxy, type WireProxy } from '../support/wire-proxy.js';

let proxy: WireProxy;
let serve: ServeProcess | undefined;
beforeAll(async () => {
  proxy = await startWireProxy(inject('mongoUri'));
});
afterEach(async () => {
  proxy.forward();
  await serve?.stop('SIGKILL');
  serve = undefined;
});
afterAll(() => proxy?.close());

const probe = async (path: string) => (await fetch(`${serve!.baseUrl}${path}`)).status;
const logged = (msg: string) => serve!.lines.filter((l) => l.msg === msg);

describe('serve under database faults', () => {
  it(
    "when Agenda's unawaited unlock of a job fails in the database, the process logs it and keeps answering",
    { timeout: 60_000 },
    async () => {
      const dbName = `test_${randomUUID().slice(0, 8)}`;
      // A job whose lock has expired and whose run is a minute away: a worker locks it, finds it
      // too far off, and releases it with unlockJob(), which Agenda 6.2 neither awaits nor catches.
      const client = await new MongoClient(databaseUri(dbName)).connect();
      try {
        const hour = 3_600_000;
        await client
          .db(dbName)
          .collection(JOBS_COLLECTION)
          .insertOne({
            name: JOB_NAME,
            data: {},
            type: 'normal',
            priority: 0,
            nextRunAt: new Date(Date.now() + hour),
            lockedAt: new Date(Date.now() - hour),
          });
      } finally {
        await client.close();
      }
      const unlock = proxy.on(
        { command: 'update', collection: JOBS_COLLECTION, match: (c) => c.body.updates?.[0]?.u?.$unset?.lockedAt !== undefined },
        { action: 'fail', code: 14, errmsg: 'database is locked (injected by the wire proxy)' },
      );
      serve = await startServe(proxy.uri(dbName));
      await unlock.reached;
      await waitFor(
        async () => logged('unhandled rejection (logged; the process carries on)').length,
        (n) => n > 0,
        10_000,
      );
      // Node ends a process on an unhandled rejection as it is reported, before any later line: still
      // running once the line is written, and answering after it, it carries on.
      expect(serve.child.exitCode).toBeNull();
      expect(await probe('/healthz')).toBe(200);
      const [line] = logged('unhandled rejection (logged; the process carries on)');
      expect(JSON.stringify(line)).toMatch(/database is locked/);
    },
  );

  it(
    'after an outage past DB_RECONNECT_AFTER_MS in which the database port accepts and closes every connection, /readyz is 200 again without a restart, the client having been reopened',
    { timeout: 120_000 },
    async () => {
      serve = await startServe(proxy.uri(`test_${randomUUID().slice(0, 8)}`), { DB_RECONNECT_AFTER_MS: '2000' });
      expect(await probe('/readyz')).toBe(200);
      proxy.refuse();
      // The outage lasts until the client has been reopened at least once, and a probe after it still fails.
      await waitFor(
        async () => logged('database unreachable: reopening the client').length,
        (reopened) => reopened > 0,
        30_000,
        250,
      );
      expect(await probe('/readyz')).toBe(503);
      expect(await probe('/healthz')).toBe(200);
      proxy.forward();
      const started = Date.now();
      const status = await waitFor(
        () => probe('/readyz'),
        (s) => s === 200,
        30_000,
        500,
      );
      console.log(`readiness came back ${Date.now() - started} ms after the database did`);
      expect(status).toBe(200);
    },
  );

  it(
    'when the database stays unreachable past DB_UNHEALTHY_AFTER_MS, /healthz answers 503, and 200 again once it is back',
    { timeout: 120_000 },
    async () => {
      serve = await startServe(proxy.uri(`test_${randomUUID().slice(0, 8)}`), {
        DB_RECONNECT_AFTER_MS: '1000',
        DB_UNHEALTHY_AFTER_MS: '4000',
      });
      expect(await probe('/healthz')).toBe(200);
      proxy.refuse();
      expect(
        await waitFor(
          () => probe('/healthz'),
          (s) => s === 503,
          20_000,
          250,
        ),
      ).toBe(503);
      proxy.forward();
      expect(
        await waitFor(
          () => probe('/healthz'),
          (s) => s === 200,
          30_000,
          250,
        ),
      ).toBe(200);
      expect(
        await waitFor(
          () => probe('/readyz'),
          (s) => s === 200,
          30_000,
          250,
        ),
      ).toBe(200);
    },
  );
});
