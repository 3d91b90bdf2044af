/** Bench (c)'s baseline, shared by scripts/bench.ts and scripts/profile/service.ts. */
import { createServer, type Server } from 'node:http';
import type { Db } from 'mongodb';
import { nowTimestamp } from '../src/lib/clock.js';

/** The same work as a single pause, on a bare node:http server: the conditional update, then a read if it matched nothing. */
export function bareServer(db: Db, merchantId: string): Server {
  const subscriptions = db.collection('subscriptions');
  return createServer((req, res) => {
    const id = req.url!.split('/')[3]!;
    void (async () => {
      const changed = await subscriptions.findOneAndUpdate(
        { _id: id as never, merchantId, status: 'fulfilled' },
        { $set: { status: 'paused', modifiedAt: nowTimestamp() } },
        { returnDocument: 'after' },
      );
      const doc = changed ?? (await subscriptions.findOne({ _id: id as never, merchantId }));
      res.writeHead(doc ? 200 : 404, { 'content-type': 'application/json' }).end(JSON.stringify(doc));
    })().catch(() => res.writeHead(500).end());
  });
}
