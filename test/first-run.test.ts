/** What `serve` says when it starts is what runs (issue 24). */
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { databaseUri } from './support/service.js';
import { startServe, type ServeProcess } from './support/worker-process.js';

let serve: ServeProcess | undefined;
afterAll(async () => {
  await serve?.stop();
});

describe('serve at start', () => {
  it('"service listening" gives the bulk concurrency that runs, the one its workers start with, not the one asked for', async () => {
    serve = await startServe(databaseUri(`test_${randomUUID().slice(0, 8)}`), { BULK_CONCURRENCY: '4' });
    const line = (msg: string) => serve!.lines.find((l) => l.msg === msg);
    const started = line('bulk workers started');
    expect(started).toBeDefined();
    expect(line('service listening')).toMatchObject({ bulkConcurrency: started!['concurrency'] });
  });
});
