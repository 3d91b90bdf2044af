/**
 * FerretDB v1 with its SQLite backend: the embedded database where no `mongod` can be had
 * (docs/design.md §8), built (patched) by ./ferretdb-build.ts and started here.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { canConnect, freePort } from '../lib/net.js';
import type { Logger } from '../logger.js';

export { ensureFerretdbBinary, ferretdbBinaryPath, FERRETDB_PATCHES, FERRETDB_VERSION } from './ferretdb-build.js';

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
    throw new Error(`${(error as Error).message}\n${stderr}`, { cause: error });
  }
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    uri: `mongodb://127.0.0.1:${port}/`,
    port,
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
