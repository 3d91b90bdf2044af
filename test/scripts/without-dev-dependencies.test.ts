/**
 * The service as a production install runs it (`npm ci --omit=dev`, the image): without
 * mongodb-memory-server, a development dependency that only the embedded database imports. The
 * sandbox runs there on the FerretDB binary that SANDBOX_FERRETDB names, as in the image, with no
 * Go to build one (`npm run check:image` runs the image's own).
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { CACHE_DIR } from '../../src/db/embedded.js';
import { ferretdbBinaryPath } from '../../src/db/ferretdb.js';
import { projectRoot } from '../../src/lib/project-root.js';
import { call } from '../support/http.js';
import { databaseUri } from '../support/service.js';
import { startServe, type ServeProcess } from '../support/worker-process.js';
import { waitFor } from '../support/wait.js';

const withoutMemoryServer = {
  NODE_OPTIONS:
    `${process.env.NODE_OPTIONS ?? ''} --import=${pathToFileURL(join(projectRoot(), 'test', 'support', 'without-memory-server.mjs')).href}`.trim(),
};

let serve: ServeProcess | undefined;
afterAll(async () => {
  await serve?.stop();
});

describe('an install without dev dependencies', () => {
  it('with MONGODB_URI set, serve starts and answers ready: nothing on its path loads mongodb-memory-server', async () => {
    serve = await startServe(databaseUri(`test_${randomUUID().slice(0, 8)}`), withoutMemoryServer);
    const ready = await fetch(`${serve.baseUrl}/readyz`);
    expect(ready.status).toBe(200);
    expect(serve.stderr.join('')).not.toMatch(/mongodb-memory-server/);
  });

  it('without MONGODB_URI, serve asking for mongodb-memory-server exits 1 with one line saying to set MONGODB_URI', async () => {
    const env: Record<string, string | undefined> = { ...process.env, ...withoutMemoryServer, EMBEDDED_DB: 'memory-server', PORT: '0' };
    delete env.MONGODB_URI;
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main/cli.ts', 'serve'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    clearTimeout(timer);
    expect(code).toBe(1);
    expect(stderr.trim().split('\n')).toEqual([
      'subsvc: mongodb-memory-server is not installed (an install without dev dependencies): set MONGODB_URI',
    ]);
  });
});

/** The compiled CLI as the image runs it: no mongodb-memory-server, no Go on the PATH, no MONGODB_URI. */
function imageLikeSandbox(ferretdb: string): ChildProcessWithoutNullStreams {
  const env: Record<string, string | undefined> = {
    ...process.env,
    ...withoutMemoryServer,
    PATH: '/usr/bin:/bin',
    SANDBOX_FERRETDB: ferretdb,
  };
  delete env.MONGODB_URI;
  return spawn(process.execPath, ['bin/subsvc.js', 'sandbox', '--port', '0', '--seed', '2'], { cwd: projectRoot(), env });
}

/** Whether a running process was started from this file (its command line names it). */
function running(binary: string): boolean {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .some((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0] === binary;
      } catch {
        return false;
      }
    });
}

describe('the sandbox without dev dependencies (as in the image)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'subsvc-image-engine-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('on the FerretDB binary SANDBOX_FERRETDB names: prints its JSON line, answers its test key, and stops with its folder gone', async () => {
    // Under a name of its own, so that the engine seen running is the one named, not the checkout's cached build.
    const named = join(dir, 'ferretdb');
    symlinkSync(ferretdbBinaryPath(CACHE_DIR), named);
    const child = imageLikeSandbox(named);
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const lines: { url: string; testApiKey: string; subscriptionIds: string[]; dataDir: string }[] = [];
    createInterface({ input: child.stdout }).on('line', (line) => lines.push(JSON.parse(line)));
    try {
      const [ready] = await waitFor(
        async () => lines,
        (l) => l.length > 0 || child.exitCode !== null,
        60_000,
        50,
        () => `the sandbox's first line (stderr: ${stderr})`,
      );
      const paused = await call(ready!.url, `/v2/subscriptions/${ready!.subscriptionIds[0]}/pause`, { apiKey: ready!.testApiKey });
      expect([paused.status, paused.body.status, paused.body.livemode]).toEqual([200, 'paused', false]);
      expect(stderr).not.toMatch(/mongodb-memory-server|building FerretDB/);
      expect(running(named)).toBe(true);
      const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(existsSync(ready!.dataDir)).toBe(false);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  }, 90_000);

  it('SANDBOX_FERRETDB naming no executable: exit 1 with one line naming the variable', async () => {
    const child = imageLikeSandbox('/nonexistent/ferretdb');
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(1);
    expect(stderr.trim().split('\n')).toEqual(['subsvc: SANDBOX_FERRETDB names /nonexistent/ferretdb, which is not an executable file']);
  }, 60_000);
});
