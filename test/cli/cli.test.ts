import { execFile } from 'node:child_process';
import { createServer } from 'node:net';
import { promisify } from 'node:util';
import { MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { freePort } from '../../src/lib/net.js';
import { testModeIdOf } from '../../src/merchants/livemode.js';
import { databaseUri } from '../support/service.js';

const run = promisify(execFile);
const dbName = `cli_${Date.now()}`;
let client: MongoClient;

/** Runs the CLI from source, as `npx subsvc` runs its compiled twin. */
async function subsvc(args: string[], env: Record<string, string | undefined>) {
  const childEnv = { ...process.env, ...env };
  if (env.MONGODB_URI === undefined) delete childEnv.MONGODB_URI;
  try {
    // A process that never exits is killed after 30 s, and fails the test that ran it.
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', 'src/main/cli.ts', ...args], {
      env: childEnv,
      timeout: 30_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

beforeAll(async () => {
  client = await new MongoClient(databaseUri(dbName)).connect();
});
afterAll(async () => {
  await client.db(dbName).dropDatabase();
  await client.close();
});

describe('subsvc admin commands', () => {
  it('merchant create prints one JSON line with the id and a key whose hash alone is stored', async () => {
    const res = await subsvc(['merchant', 'create', '--name', 'Acme'], { MONGODB_URI: databaseUri(dbName) });
    expect(res.code).toBe(0);
    const lines = res.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    const created = JSON.parse(lines[0]!);
    expect(Object.keys(created).sort()).toEqual(['apiKey', 'merchantId', 'testApiKey']);
    expect([created.apiKey, created.testApiKey]).toEqual([expect.stringMatching(/^sk_live_/), expect.stringMatching(/^sk_test_/)]);
    const stored = await client.db(dbName).collection('merchants').findOne({ _id: created.merchantId });
    expect(stored).toMatchObject({ name: 'Acme' });
    expect(JSON.stringify(stored)).not.toContain(created.apiKey);
  });

  it('subscriptions seed creates subscriptions of the merchant with the given status and plan', async () => {
    const uri = databaseUri(dbName);
    const { merchantId } = JSON.parse((await subsvc(['merchant', 'create', '--name', 'Seeder'], { MONGODB_URI: uri })).stdout);
    const plan = '3f2a1b0c-9d8e-4f7a-8b6c-5d4e3f2a1b0c';
    const res = await subsvc(['subscriptions', 'seed', '--merchant', merchantId, '--count', '3', '--status', 'paused', '--plan', plan], {
      MONGODB_URI: uri,
    });
    expect(res.code).toBe(0);
    const { subscriptionIds } = JSON.parse(res.stdout);
    expect(subscriptionIds).toHaveLength(3);
    const docs = await client
      .db(dbName)
      .collection('subscriptions')
      .find({ _id: { $in: subscriptionIds } })
      .toArray();
    expect(docs.map((d) => [d.merchantId, d.status, d.planId])).toEqual(Array(3).fill([merchantId, 'paused', plan]));
  });

  it('without MONGODB_URI, an admin command exits non-zero with one line on stderr and nothing on stdout', async () => {
    const res = await subsvc(['merchant', 'create', '--name', 'Nobody'], { MONGODB_URI: undefined });
    expect(res.code).not.toBe(0);
    expect(res.stdout).toBe('');
    expect(res.stderr.trim().split('\n')).toEqual(['subsvc: MONGODB_URI is not set: admin commands work on a running database']);
  });

  it('with an unreachable database, an admin command exits non-zero with a one-line message', async () => {
    const port = await freePort();
    const res = await subsvc(['merchant', 'create', '--name', 'Nobody'], { MONGODB_URI: `mongodb://127.0.0.1:${port}/x` });
    expect(res.code).not.toBe(0);
    expect(res.stdout).toBe('');
    expect(res.stderr.trim().split('\n')).toHaveLength(1);
    expect(res.stderr).toMatch(/^subsvc: cannot reach the database at MONGODB_URI/);
  });

  it('seeding for a merchant that does not exist fails with a clear message', async () => {
    const res = await subsvc(['subscriptions', 'seed', '--merchant', '3f2a1b0c-9d8e-4f7a-8b6c-5d4e3f2a1b0c', '--count', '1'], {
      MONGODB_URI: databaseUri(dbName),
    });
    expect(res.code).not.toBe(0);
    expect(res.stderr).toBe('subsvc: no merchant with id 3f2a1b0c-9d8e-4f7a-8b6c-5d4e3f2a1b0c\n');
  });
});

describe('subsvc keys', () => {
  it(
    "create, list and revoke a merchant's keys, one JSON line each; the last key is kept, another merchant's key id is not found",
    { timeout: 60_000 },
    async () => {
      const env = { MONGODB_URI: databaseUri(dbName) };
      const keys = async (...args: string[]) => subsvc(['keys', ...args], env);
      const first = JSON.parse((await subsvc(['merchant', 'create', '--name', 'Keys'], env)).stdout);
      const other = JSON.parse((await subsvc(['merchant', 'create', '--name', 'Other'], env)).stdout);
      const created = await keys('create', '--merchant', first.merchantId);
      expect([created.code, created.stdout.trim().split('\n').length]).toEqual([0, 1]);
      const made = JSON.parse(created.stdout);
      expect(Object.keys(made).sort()).toEqual(['createdAt', 'expiresAt', 'id', 'key', 'livemode', 'prefix']);
      const listed = await keys('list', '--merchant', first.merchantId);
      const { data } = JSON.parse(listed.stdout);
      expect(data.map((k: { prefix: string }) => k.prefix)).toEqual([first.apiKey.slice(0, 16), made.prefix]);
      expect(listed.stdout).not.toContain(first.apiKey);
      expect(listed.stdout).not.toContain(made.key);
      expect(JSON.parse((await keys('revoke', '--merchant', first.merchantId, '--key', data[0].id)).stdout)).toEqual({
        revoked: data[0].id,
      });
      const last = await keys('revoke', '--merchant', first.merchantId, '--key', made.id);
      expect([last.code, last.stdout]).toEqual([1, '']);
      expect(last.stderr).toMatch(/^subsvc: API key .* is your last active key that does not expire/);
      const foreign = await keys('revoke', '--merchant', other.merchantId, '--key', made.id);
      expect([foreign.code, foreign.stderr]).toEqual([1, `subsvc: API key ${made.id} not found\n`]);
    },
  );

  it('keys create --mode test gives a merchant made before test mode a test mode, and a test key of it', { timeout: 60_000 }, async () => {
    const env = { MONGODB_URI: databaseUri(dbName) };
    const merchantId = randomUUID();
    await client
      .db(dbName)
      .collection('merchants')
      .insertOne({ _id: merchantId as never, name: 'Before test mode', createdAt: new Date(), keys: [], keysVersion: 1 });
    const created = await subsvc(['keys', 'create', '--merchant', merchantId, '--mode', 'test'], env);
    expect(created.code).toBe(0);
    expect(JSON.parse(created.stdout)).toMatchObject({ key: expect.stringMatching(/^sk_test_/), livemode: false });
    expect(
      await client
        .db(dbName)
        .collection('merchants')
        .findOne({ _id: testModeIdOf(merchantId) as never }),
    ).toMatchObject({ liveMerchantId: merchantId });
    const listed = JSON.parse((await subsvc(['keys', 'list', '--merchant', merchantId, '--mode', 'test'], env)).stdout);
    expect(listed.data.map((k: { livemode: boolean }) => k.livemode)).toEqual([false]);
  });
});

describe('subsvc serve', () => {
  it('on a port already in use, exits non-zero with one line on stderr', { timeout: 60_000 }, async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const { port } = blocker.address() as { port: number };
    try {
      const res = await subsvc(['serve'], { MONGODB_URI: databaseUri(dbName), PORT: String(port), LOG_LEVEL: 'silent' });
      expect(res.code).toBe(1);
      expect(res.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^subsvc: .*EADDRINUSE/)]);
    } finally {
      blocker.close();
    }
  });
});
