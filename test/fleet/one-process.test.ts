/**
 * One long-running process per database where conditional updates are not atomic across processes
 * (src/fleet/process-lease.ts, docs/operations.md): a second `serve` or `worker` beside a running
 * `serve` refuses to start with one line naming why and ALLOW_SHARED_EMBEDDED, while the CLI's
 * one-shot commands work beside it; once the first is killed with SIGKILL, a new `serve` starts
 * within the lease time. MongoDB keeps changes atomic across processes and takes no lease.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { databaseUri } from '../support/service.js';
import { startServe, type ServeProcess } from '../support/worker-process.js';

/** Short, so that the lease a killed process leaves runs out soon: it lasts three intervals. */
const HEARTBEAT_MS = 1_000;
const uri = databaseUri(`test_${randomUUID().slice(0, 8)}`);
const env = { HEARTBEAT_INTERVAL_MS: String(HEARTBEAT_MS), BULK_CONCURRENCY: '0' };

interface Ran {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `subsvc …` on the test database to its end (or kills it after `ms`). */
function subsvc(args: readonly string[], extra: Record<string, string> = {}, ms = 60_000): Promise<Ran> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main/cli.ts', ...args], {
    env: { ...process.env, MONGODB_URI: uri, LOG_LEVEL: 'info', PORT: '0', ...env, ...extra },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), ms);
  return new Promise((resolve) =>
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
}

/** A loopback port free a moment ago, for `webhooks listen`, which takes none of its own choosing. */
function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

const oneProcessOnly = !inject('dbCapabilities').atomicConditionalUpdate;
const processes: ServeProcess[] = [];
beforeAll(() => {
  if (!oneProcessOnly) console.log('one-process: this engine keeps changes atomic across processes; no process takes the lease');
});
afterAll(async () => {
  await Promise.all(processes.map((p) => p.stop('SIGKILL')));
});

it.runIf(oneProcessOnly)(
  'beside a running serve, a second serve or worker is refused in one line, the one-shot commands work, and after SIGKILL a new serve starts',
  async () => {
    const first = await startServe(uri, env);
    processes.push(first);

    const [serve, worker] = await Promise.all([subsvc(['serve']), subsvc(['worker'], { BULK_CONCURRENCY: '1' })]);

    for (const refused of [serve, worker]) {
      expect(refused.code).not.toBe(0);
      expect(refused.code).not.toBeNull();
      const lines = refused.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^subsvc: another serve process \(pid \d+ on .+\) runs on this database.*ALLOW_SHARED_EMBEDDED=true/);
    }
    expect(serve.stdout).not.toContain('service listening');

    const created = await subsvc(['merchant', 'create', '--name', 'Beside']);
    expect(created.code).toBe(0);
    const { merchantId } = JSON.parse(created.stdout) as { merchantId: string };
    const keys = await subsvc(['keys', 'list', '--merchant', merchantId]);
    expect(keys.code).toBe(0);
    expect((JSON.parse(keys.stdout) as { data: unknown[] }).data).toHaveLength(1);
    const status = await subsvc(['status']);
    expect(status.code).toBe(0);
    expect((JSON.parse(status.stdout) as { processes: { serve: number } }).processes.serve).toBe(1);
    // A long-running listener, stopped once it has registered its endpoint.
    const listening = await subsvc(['webhooks', 'listen', '--merchant', merchantId, '--port', String(await freePort())], {}, 10_000);
    expect(listening.stdout).toContain('"listening"');

    const allowed = await startServe(uri, { ...env, ALLOW_SHARED_EMBEDDED: 'true' });
    processes.push(allowed);
    await allowed.stop();

    await first.stop('SIGKILL');
    const killedAt = Date.now();
    const next = await startServe(uri, env);
    processes.push(next);
    const waited = Date.now() - killedAt;
    console.log(`one-process: a new serve started ${waited} ms after the first was killed (lease: ${3 * HEARTBEAT_MS} ms)`);
    expect(next.lines.some((l) => l.msg === 'service listening')).toBe(true);
  },
  240_000,
);
