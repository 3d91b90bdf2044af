/**
 * FerretDB v1 with its SQLite backend: the embedded database where no `mongod` can be had
 * (DESIGN.md §8). Built from the Go module proxy into a project-local cache on first use.
 *
 * Why not plain `go install ...@v1.24.2`: the module's build/version/version.txt is empty, so a
 * binary installed that way panics at start ("Invalid build/version/version.txt"), and the
 * proxy refuses the version list that `go install` asks for. We download the module, copy it
 * to a writable directory, write the version file and build it there.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { canConnect, freePort } from '../lib/net.js';
import type { Logger } from '../logger.js';

const run = promisify(execFile);

export const FERRETDB_MODULE = 'github.com/FerretDB/FerretDB';
export const FERRETDB_VERSION = 'v1.24.2';

export function ferretdbBinaryPath(cacheDir: string): string {
  return join(cacheDir, 'ferretdb', FERRETDB_VERSION, 'ferretdb');
}

export async function ensureFerretdbBinary(cacheDir: string, log: Logger): Promise<string> {
  const binary = ferretdbBinaryPath(cacheDir);
  if (existsSync(binary)) return binary;
  log.info({ version: FERRETDB_VERSION }, 'building FerretDB from the Go module proxy (first run only, about 2 minutes)');
  const env = { ...process.env, GOFLAGS: '-modcacherw' };
  const { stdout } = await run('go', ['mod', 'download', '-json', `${FERRETDB_MODULE}@${FERRETDB_VERSION}`], {
    env,
    maxBuffer: 16 * 1024 * 1024,
  });
  const moduleDir = (JSON.parse(stdout) as { Dir: string }).Dir;
  const work = mkdtempSync(join(tmpdir(), 'ferretdb-build-'));
  try {
    cpSync(moduleDir, work, { recursive: true });
    chmodSync(join(work, 'build', 'version'), 0o755);
    writeFileSync(join(work, 'build', 'version', 'version.txt'), `${FERRETDB_VERSION}\n`);
    mkdirSync(join(cacheDir, 'ferretdb', FERRETDB_VERSION), { recursive: true });
    const partial = `${binary}.partial`;
    await run('go', ['build', '-o', partial, './cmd/ferretdb'], { cwd: work, env, maxBuffer: 16 * 1024 * 1024 });
    renameSync(partial, binary);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  log.info({ binary }, 'FerretDB built');
  return binary;
}

async function waitForPort(port: number, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`FerretDB exited with code ${child.exitCode} before listening`);
    if (await canConnect(port)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`FerretDB did not listen on port ${port} within ${timeoutMs} ms`);
}

export interface RunningFerretdb {
  readonly uri: string;
  readonly port: number;
  readonly dataDir: string;
  stop(): Promise<void>;
}

export interface FerretdbOptions {
  /** Reuse a data directory (to restart a stopped server on the same data); a temp dir otherwise. */
  readonly dataDir?: string;
  readonly port?: number;
}

export async function startFerretdb(binary: string, log: Logger, options: FerretdbOptions = {}): Promise<RunningFerretdb> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'subsvc-ferretdb-'));
  const ownsDataDir = options.dataDir === undefined;
  const port = options.port ?? (await freePort());
  const debugPort = await freePort();
  // FerretDB runs under a small sh watchdog holding a pipe from us: when this process exits, even
  // by SIGKILL, the pipe closes and the watchdog stops FerretDB, so no server is left behind.
  const watchdog = '"$@" & server=$!; cat >/dev/null; kill $server 2>/dev/null; wait $server';
  const child = spawn(
    'sh',
    [
      '-c',
      watchdog,
      'ferretdb-watchdog',
      binary,
      '--handler=sqlite',
      `--sqlite-url=file:${dataDir}/`,
      `--listen-addr=127.0.0.1:${port}`,
      `--state-dir=${dataDir}`,
      '--telemetry=disable',
      `--debug-addr=127.0.0.1:${debugPort}`,
      '--log-level=warn',
    ],
    { stdio: ['pipe', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  try {
    await waitForPort(port, child, 20_000);
  } catch (error) {
    child.kill('SIGKILL');
    throw new Error(`${(error as Error).message}\n${stderr}`);
  }
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    uri: `mongodb://127.0.0.1:${port}/`,
    port,
    dataDir,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.stdin?.end();
        const killer = setTimeout(() => child.kill('SIGKILL'), 5_000);
        await exited;
        clearTimeout(killer);
      }
      if (ownsDataDir) rmSync(dataDir, { recursive: true, force: true });
      log.debug({ port }, 'FerretDB stopped');
    },
  };
}
