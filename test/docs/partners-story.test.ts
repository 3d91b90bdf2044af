/**
 * docs/partners.md's test-mode story, run as printed against the service: each command of its `sh`
 * block in bash, with only what the page says to fill in replaced (the keys, the test mode id, the
 * database URI, the subscription the first command makes, and a free port for the listener), and
 * each answer checked against the comment the page prints under it.
 */
import { spawn, execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testModeIdOf } from '../../src/merchants/livemode.js';
import { projectRoot } from '../../src/lib/project-root.js';
import { databaseUri, startTestService, type TestService } from '../support/service.js';
import { waitFor } from '../support/wait.js';

let t: TestService;
beforeAll(async () => {
  t = await startTestService({ workers: 1, webhooksAllowPrivateUrls: true });
});
afterAll(() => t.close());

const page = readFileSync(join(projectRoot(), 'docs', 'partners.md'), 'utf8');
const story = /The whole story with curl\.[\s\S]*?```sh\n([\s\S]*?)```/.exec(page)![1]!;

/** The block's commands, a backslash-continued line joined to the next; comments and blank lines left out. */
function commands(block: string): string[] {
  return block
    .replace(/\\\n\s*/g, '')
    .split('\n')
    .map((line) => line.replace(/\s+#.*$/, '').trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

const bash = (script: string) =>
  new Promise<string>((resolve, reject) => {
    // Asynchronously: the service answering the story runs in this process.
    execFile('bash', ['-c', script], { encoding: 'utf8', timeout: 60_000 }, (error, stdout, stderr) =>
      error ? reject(new Error(`${script}\n${stderr}`)) : resolve(stdout),
    );
  });

describe('docs/partners.md, the test-mode story as printed', () => {
  it('makes test subscriptions, pauses one until day 30, advances to day 31, sees it resumed and its webhooks, and cleans up', async () => {
    const { merchantId, apiKey, testApiKey } = await t.merchant();
    const port = await freePort();
    const filled = (line: string) =>
      line
        .replace('http://localhost:8080', t.baseUrl)
        .replace('sk_live_…', apiKey)
        .replace('sk_test_…', testApiKey)
        .replace('<the URI npm start printed>', databaseUri(t.db.databaseName))
        .replace("'<test mode id>'", `'${testModeIdOf(merchantId)}'`)
        .replace('--port 4242', `--port ${port}`);
    const [setup, ...steps] = ((all) => [
      all.filter((c) => /^(H=|LIVE=|day\(\))/.test(c)),
      ...all.filter((c) => !/^(H=|LIVE=|day\(\))/.test(c)),
    ])(commands(story));
    const prelude = setup.map(filled).join('\n');
    expect(steps).toHaveLength(9);

    const made = JSON.parse(await bash(`${prelude}\n${filled(steps[0]!)}`));
    expect(made.data).toHaveLength(2);
    expect(
      made.data.every((s: { livemode: boolean; merchantId: string }) => !s.livemode && s.merchantId === testModeIdOf(merchantId)),
    ).toBe(true);
    const sub = made.data[0].id as string;
    const run = (step: string) => bash(`${prelude}\n${filled(step).replaceAll('<sub>', sub)}`);

    // The listener, in the background as the page runs it: wait for its line before pausing.
    expect(steps[1]).toMatch(/&$/);
    const listener = spawn('bash', ['-c', `${prelude}\n${filled(steps[1]!).replace(/&$/, '')}`], { cwd: projectRoot(), detached: true });
    let heard = '';
    listener.stdout.on('data', (chunk: Buffer) => (heard += chunk.toString()));
    try {
      await waitFor(
        async () => heard,
        (text) => text.includes('"listening"'),
        60_000,
        100,
        'the listener',
      );

      expect(JSON.parse(await run(steps[2]!))).toMatchObject({ livemode: false });
      expect(JSON.parse(await run(steps[3]!))).toMatchObject({ id: sub, status: 'paused' });
      expect(JSON.parse(await run(steps[4]!))).toMatchObject({ appliedCount: 1, livemode: false });
      const read = JSON.parse(await run(steps[5]!));
      expect(read.status).toBe('fulfilled');
      const events = JSON.parse(await run(steps[6]!)).data.map((e: { type: string }) => e.type);
      expect(events).toEqual(['subscription.resumed', 'subscription.resume_scheduled']);
      await waitFor(
        async () => heard,
        (text) => text.includes('"type":"subscription.resumed"'),
        30_000,
        100,
        'the resumed webhook',
      );
      const printed = heard
        .split('\n')
        .filter((line) => line.includes('"webhookId"'))
        .map((line) => JSON.parse(line));
      // At least once and unordered (docs/webhooks.md): each of the three, in any order.
      expect([...new Set(printed.map((p: { event: { type: string } }) => p.event.type))].sort()).toEqual([
        'subscription.paused',
        'subscription.resume_scheduled',
        'subscription.resumed',
      ]);
      expect(printed.every((p: { verified: boolean }) => p.verified)).toBe(true);
      expect(JSON.parse(await run(steps[7]!))).toMatchObject({ status: 403, code: '0011' });
      expect(JSON.parse(await run(steps[8]!))).toEqual({ deletedCount: 2, livemode: false });
    } finally {
      process.kill(-listener.pid!, 'SIGINT');
    }
  });
});
