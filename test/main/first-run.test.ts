/** What `serve` says when it starts is what runs, and what stops it is said before any slow step. */
import { execFile, spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { databaseUri } from '../support/service.js';
import { startServe, type ServeProcess } from '../support/worker-process.js';
import { preflight, type EngineProbes } from '../../src/main/preflight.js';
import { projectRoot } from '../../src/lib/project-root.js';

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

/** `subsvc serve` from source, as `npm start` runs its compiled twin, until it exits by itself. */
async function serveUntilExit(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string; ms: number }> {
  const childEnv: Record<string, string | undefined> = { ...process.env, LOG_LEVEL: 'info', ...env };
  if (env.MONGODB_URI === undefined) delete childEnv.MONGODB_URI;
  const started = Date.now();
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main/cli.ts', 'serve'], {
    env: childEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  // A process that started instead of stopping is killed, and fails the test by its exit code.
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  const code = await new Promise<number | null>((resolve) => child.once('exit', (exitCode) => resolve(exitCode)));
  clearTimeout(timer);
  return { code, stdout, stderr, ms: Date.now() - started };
}

const slowSteps = /embedded database started|building FerretDB|database connected/;

describe('serve checks what it can before any slow step', () => {
  it('a busy PORT is reported in one line naming PORT, before the embedded database is built or started', async () => {
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const { port } = busy.address() as AddressInfo;
    try {
      const run = await serveUntilExit({ PORT: String(port), EMBEDDED_DB: 'ferretdb' });
      expect(run.code).toBe(1);
      expect(run.stderr.trim().split('\n')).toEqual([
        `subsvc: port ${port} on 127.0.0.1 is in use (EADDRINUSE): set PORT to a free port (PORT=${port + 1} npm start)`,
      ]);
      expect(run.stdout).not.toMatch(slowSteps);
    } finally {
      busy.close();
    }
  });

  it('a HOST that is not an address of this machine is named before the database is started', async () => {
    const run = await serveUntilExit({ HOST: '203.0.113.7', PORT: '0', EMBEDDED_DB: 'ferretdb' });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^subsvc: cannot listen on 203\.0\.113\.7: set HOST to an address of this machine/);
    expect(run.stdout).not.toMatch(slowSteps);
  });

  it('a MONGODB_URI that does not parse is named at once, not after a server-selection timeout', async () => {
    const run = await serveUntilExit({ MONGODB_URI: 'mongodb://db:notaport/subscriptions', PORT: '0' });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^subsvc: MONGODB_URI is not a valid connection string: /);
    expect(run.stdout).not.toMatch(slowSteps);
  });
});

describe('preflight: Go, when the embedded database must be built', () => {
  const config = {
    host: '127.0.0.1',
    port: 0,
    metricsPort: undefined,
    mongodbUri: undefined,
    downloadProxy: { proxied: false, mongodDownloadUrl: undefined },
  } as const;
  const probes = (machine: { built: boolean; mongod: boolean; go: boolean }): EngineProbes => ({
    ferretdbBuilt: () => machine.built,
    mongodObtainable: async () => machine.mongod,
    goInstalled: () => machine.go,
  });
  const noGo = /^the embedded database \(FerretDB\) must be built once and Go is not installed: install Go .*, or set MONGODB_URI/;

  it('without Go, no FerretDB build and no mongod to be had, says to install Go or set MONGODB_URI', async () => {
    await expect(
      preflight({ ...config, embeddedEngine: 'auto' }, true, probes({ built: false, mongod: false, go: false })),
    ).rejects.toThrow(noGo);
    await expect(
      preflight({ ...config, embeddedEngine: 'ferretdb' }, true, probes({ built: false, mongod: true, go: false })),
    ).rejects.toThrow(noGo);
  });

  it('asks for no Go where FerretDB is built, a mongod can be had, or MONGODB_URI is set', async () => {
    await expect(
      preflight({ ...config, embeddedEngine: 'ferretdb' }, true, probes({ built: true, mongod: false, go: false })),
    ).resolves.toBeUndefined();
    await expect(
      preflight({ ...config, embeddedEngine: 'auto' }, true, probes({ built: false, mongod: true, go: false })),
    ).resolves.toBeUndefined();
    await expect(
      preflight(
        { ...config, embeddedEngine: 'auto', mongodbUri: 'mongodb://127.0.0.1:1/x' },
        true,
        probes({ built: false, mongod: false, go: false }),
      ),
    ).resolves.toBeUndefined();
  });
});

describe('npx subsvc', () => {
  it("runs the CLI that npm ci built and linked, without installing the project into npx's cache first", async () => {
    const linked = join(projectRoot(), 'node_modules', '.bin', 'subsvc');
    expect(existsSync(linked), `${linked} is missing: npm ci links it (package.json's prepare script)`).toBe(true);
    // An empty npm cache of its own: whatever npx installs shows up in it.
    const cache = mkdtempSync(join(tmpdir(), 'npx-cache-'));
    try {
      const { stdout } = await promisify(execFile)('npx', ['subsvc', 'help'], {
        cwd: projectRoot(),
        env: { ...process.env, npm_config_cache: cache },
        timeout: 50_000,
      });
      expect(stdout).toMatch(/^usage:\n {2}subsvc serve\n/);
      expect(existsSync(join(cache, '_npx'))).toBe(false);
    } finally {
      rmSync(cache, { recursive: true, force: true });
    }
  });
});

describe('serve on a terminal', () => {
  it('logs one readable line per entry, not JSON, and prints the summary last: engine, URL, docs, keys with the test mode id, curls', async () => {
    // script(1) gives the process a terminal, as `npm start` in a shell has.
    const command = `${process.execPath} --import tsx src/main/cli.ts serve`;
    const env = { ...process.env, MONGODB_URI: databaseUri(`tty_${randomUUID().slice(0, 8)}`), PORT: '0', DEMO: 'on', LOG_LEVEL: 'info' };
    const child = spawn('script', ['-qfc', command, '/dev/null'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    try {
      const deadline = Date.now() + 40_000;
      while (!/test-helpers\/subscriptions .*\r?\n/.test(output) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    } finally {
      child.kill('SIGTERM');
    }
    const lines = output
      // eslint-disable-next-line no-control-regex -- ANSI colour codes start with ESC
      .replace(/\x1b\[[0-9;]*m/g, '')
      .split(/\r?\n/)
      .filter((l) => l.trim() !== '');
    const summary = lines.findIndex((l) => l.startsWith('subsvc is listening on http://127.0.0.1:'));
    expect(summary).toBeGreaterThan(0);
    expect(lines.slice(0, summary).every((l) => /^\[\d\d:\d\d:\d\d\] (INFO|WARN): /.test(l))).toBe(true);
    expect(lines.slice(0, summary).find((l) => l.includes('service listening'))).toBeDefined();
    const rest = lines.slice(summary);
    expect(rest[1]).toMatch(/^ {2}engine: {8}(MongoDB \S+|FerretDB) \(MONGODB_URI\)/);
    expect(rest[2]).toMatch(/^ {2}API reference: http:\S+\/docs {2}\(and a console to send requests from it\)$/);
    expect(rest.find((l) => l.includes('test API key'))).toMatch(/sk_test_\S+ {2}test mode id: [0-9a-f-]{36}/);
    expect(rest.at(-1)).toMatch(/^ {2}curl -s -X POST http:\S+\/v2\/test-helpers\/subscriptions /);
  });
});

describe('bin/subsvc.js on an older Node', () => {
  // The machine's own Node, where it is older than the project's: what `node bin/subsvc.js` runs by hand.
  const systemNode = ['/usr/bin/node', '/usr/local/bin/node'].find((path) => existsSync(path));
  const version = systemNode ? String(spawnSync(systemNode, ['-p', 'process.versions.node']).stdout).trim() : '';
  const older = version !== '' && Number(version.split('.')[0]) < 24;
  if (!older)
    console.log(
      `no Node older than 24 at /usr/bin or /usr/local/bin (found ${version || 'none'}): the runtime check is not exercised here`,
    );

  it.skipIf(!older)('npm ci run by it warns about no engine: its plan (--dry-run) prints no npm warning at all', () => {
    const scratch = mkdtempSync(join(tmpdir(), 'npm-ci-'));
    try {
      for (const file of ['package.json', 'package-lock.json', '.npmrc'])
        writeFileSync(join(scratch, file), readFileSync(join(projectRoot(), file)));
      // The system's npm on the system's Node, as a newcomer's `npm ci` runs before node_modules exists.
      const path = `${dirname(systemNode!)}:/usr/bin:/bin`;
      const run = spawnSync('npm', ['ci', '--dry-run', '--ignore-scripts'], {
        cwd: scratch,
        env: { ...process.env, PATH: path },
        encoding: 'utf8',
        timeout: 120_000,
      });
      expect(run.status).toBe(0);
      expect(`${run.stdout}${run.stderr}`).not.toMatch(/npm warn|EBADENGINE/);
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  });

  it.skipIf(!older)('exits with one line naming the Node it needs and how to run it', () => {
    const run = spawnSync(systemNode!, [join(projectRoot(), 'bin', 'subsvc.js'), 'help'], { encoding: 'utf8' });
    expect(run.status).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr.trim().split('\n')).toEqual([
      `subsvc: needs Node 24.18 or later and ${systemNode} is v${version}: run it through npm (npm start, npx subsvc …), which uses the Node 24 that npm ci installed in node_modules/.bin`,
    ]);
  });
});
