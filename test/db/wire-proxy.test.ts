/**
 * The wire proxy the fault tests use (test/support/wire-proxy.ts), on the run's real database
 * through a plain driver client: it forwards, and acts on the chosen commands only.
 */
import { randomUUID } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startWireProxy, type WireProxy } from '../support/wire-proxy.js';

let proxy: WireProxy;
let client: MongoClient;
const dbName = `test_proxy_${randomUUID().slice(0, 8)}`;
beforeAll(async () => {
  proxy = await startWireProxy(inject('mongoUri'));
  client = new MongoClient(proxy.uri(dbName), { serverSelectionTimeoutMS: 10_000, retryWrites: false, retryReads: false });
  await client.connect();
});
afterAll(async () => {
  await client
    ?.db(dbName)
    .dropDatabase()
    .catch(() => undefined);
  await client?.close();
  await proxy?.close();
});

const collection = (name: string) => client.db(dbName).collection<{ _id: string }>(name);
const stored = (name: string, id: string) => collection(name).countDocuments({ _id: id });

describe('wire proxy', () => {
  it('forwards commands both ways', async () => {
    await collection('plain').insertOne({ _id: 'a' });
    expect(await stored('plain', 'a')).toBe(1);
  });

  it("'cut' at the request: the client sees a network error and the write is not applied", async () => {
    const rule = proxy.on({ command: 'insert', collection: 'cutBefore' }, { action: 'cut', times: 1 });
    await expect(collection('cutBefore').insertOne({ _id: 'b' })).rejects.toThrow(/closed|ECONNRESET|network/i);
    expect(rule.hits).toBe(1);
    expect(await stored('cutBefore', 'b')).toBe(0);
  });

  it("'cut' at the reply: the write is applied but never answered", async () => {
    proxy.on({ command: 'insert', collection: 'cutAfter' }, { action: 'cut', at: 'reply', times: 1 });
    await expect(collection('cutAfter').insertOne({ _id: 'c' })).rejects.toThrow();
    expect(await stored('cutAfter', 'c')).toBe(1);
  });

  it("'fail' answers the client an error reply; 'match' narrows the rule to the command's content", async () => {
    const rule = proxy.on(
      { command: 'update', collection: 'failing', match: (c) => c.body.updates?.[0]?.q?._id === 'x' },
      { action: 'fail', code: 1234, errmsg: 'database is locked' },
    );
    await collection('failing').insertMany([{ _id: 'x' }, { _id: 'y' }]);
    await expect(collection('failing').updateOne({ _id: 'x' }, { $set: { v: 1 } })).rejects.toMatchObject({ code: 1234 });
    expect((await collection('failing').updateOne({ _id: 'y' }, { $set: { v: 1 } })).modifiedCount).toBe(1);
    expect((await rule.reached).name).toBe('update');
    rule.remove();
    expect((await collection('failing').updateOne({ _id: 'x' }, { $set: { v: 1 } })).modifiedCount).toBe(1);
  });

  it("'hold' with ms delays the chosen command by about that long", async () => {
    const rule = proxy.on({ command: 'insert', collection: 'slow' }, { action: 'hold', ms: 700 });
    const started = Date.now();
    await collection('slow').insertOne({ _id: 'd' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(650);
    rule.remove();
  });

  it('hold() stops all traffic until release()', async () => {
    proxy.hold();
    let done = false;
    const pending = collection('held')
      .insertOne({ _id: 'e' })
      .then(() => (done = true));
    await new Promise((r) => setTimeout(r, 500));
    expect(done).toBe(false);
    proxy.release();
    await pending;
    expect(await stored('held', 'e')).toBe(1);
  });

  it('refuse() accepts and closes every connection until forward()', async () => {
    proxy.refuse();
    const refused = new MongoClient(proxy.uri(dbName), { serverSelectionTimeoutMS: 1_000 });
    const before = proxy.accepted;
    await expect(refused.connect()).rejects.toThrow();
    expect(proxy.accepted).toBeGreaterThan(before);
    await refused.close();
    proxy.forward();
    expect(await stored('plain', 'a')).toBe(1);
  });
});
