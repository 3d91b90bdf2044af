/**
 * `subsvc subscriptions seed` at scale (issue 42): its writes take the background client's bound
 * (BULK_DB_TIMEOUT_MS), not a request's, so a slow insert is waited for instead of reported as
 * "timed out" after it went in (an operator who retried doubled the data); on success every id is
 * printed, and on a failure the message says how many were inserted. Faults are made for real, by
 * a wire proxy on loopback between the CLI and the database.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { databaseUri } from '../support/service.js';
import { startWireProxy, type WireProxy } from '../support/wire-proxy.js';

const run = promisify(execFile);
const dbName = `cli_seed_${Date.now()}`;
const COUNT = 20_000;
const SLOW = 180_000;
let client: MongoClient;
let proxy: WireProxy;

async function subsvc(args: string[]) {
  const env = { ...process.env, MONGODB_URI: proxy.uri(dbName), BULK_DB_TIMEOUT_MS: '60000' };
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', 'src/main/cli.ts', ...args], {
      env,
      timeout: 150_000,
      maxBuffer: 64 * 1024 * 1024,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

async function merchant(): Promise<string> {
  const res = await subsvc(['merchant', 'create', '--name', 'Seeder']);
  expect(res.code).toBe(0);
  return JSON.parse(res.stdout).merchantId;
}

const stored = (merchantId: string) => client.db(dbName).collection('subscriptions').countDocuments({ merchantId });
const isSeedInsert = (command: { name: string; collection: string | undefined }) =>
  command.name === 'insert' && command.collection === 'subscriptions';

beforeAll(async () => {
  client = await new MongoClient(databaseUri(dbName)).connect();
  proxy = await startWireProxy(inject('mongoUri'));
});
afterAll(async () => {
  await proxy?.close();
  await client.db(dbName).dropDatabase();
  await client.close();
});

describe(`subsvc subscriptions seed --count ${COUNT}`, () => {
  it(
    'waits for a database slower than a request may be (4 s for the first insert), exits 0 and prints every id, each stored once',
    { timeout: SLOW },
    async () => {
      const merchantId = await merchant();
      const slow = proxy.on({ match: isSeedInsert }, { action: 'hold', ms: 4_000, at: 'reply', times: 1 });
      const res = await subsvc(['subscriptions', 'seed', '--merchant', merchantId, '--count', String(COUNT)]);
      slow.remove();
      expect(slow.hits).toBe(1);
      expect(res.stderr).toBe('');
      expect(res.code).toBe(0);
      const { subscriptionIds } = JSON.parse(res.stdout);
      expect(subscriptionIds).toHaveLength(COUNT);
      expect(new Set(subscriptionIds).size).toBe(COUNT);
      expect(await stored(merchantId)).toBe(COUNT);
    },
  );

  it(
    'when the database fails part way, exits 1 saying how many were inserted, which is how many are stored',
    { timeout: SLOW },
    async () => {
      const merchantId = await merchant();
      let inserts = 0;
      const failing = proxy.on(
        { match: (command) => isSeedInsert(command) && ++inserts > 3 },
        { action: 'fail', code: 6, errmsg: 'connection to the server lost (the wire proxy)' },
      );
      const res = await subsvc(['subscriptions', 'seed', '--merchant', merchantId, '--count', String(COUNT)]);
      failing.remove();
      expect(res.code).toBe(1);
      expect(res.stdout).toBe('');
      const said = /inserted (\d+) of 20000 subscriptions/.exec(res.stderr);
      expect(said, res.stderr).not.toBeNull();
      const inserted = Number(said![1]);
      expect(inserted).toBeGreaterThan(0);
      expect(inserted).toBeLessThan(COUNT);
      expect(await stored(merchantId)).toBe(inserted);
      expect(res.stderr).toContain(merchantId);
    },
  );
});
