/** `subsvc worker` and `subsvc serve` processes on the test database, as an operator would run them. */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../../src/lib/project-root.js';

export interface ServiceProcess {
  readonly child: ChildProcess;
  /** Its log lines (JSON on stdout), as they arrive. */
  readonly lines: Record<string, unknown>[];
  /** Its stderr, as it arrives. */
  readonly stderr: string[];
  /** Resolves when it has exited. */
  readonly exited: Promise<void>;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

export type WorkerProcess = ServiceProcess;

/**
 * For a test of fleet mechanics on an engine that takes one long-running process per database
 * (src/fleet/process-lease.ts): every process it runs there starts beside the others.
 */
export const FLEET_ON_ONE_DATABASE = { ALLOW_SHARED_EMBEDDED: 'true' } as const;

export interface ServeProcess extends ServiceProcess {
  readonly baseUrl: string;
}

/**
 * Where each process started and not exited yet leaves a file named by its pid, for the run's
 * global teardown (test/support/global-setup.ts) to kill what is left: a test that times out never
 * reaches its `stop()`, and vitest ends its test process by a signal, which runs no exit handler.
 * One such process, left by a timed-out test, went on polling for an hour of benchmarks.
 */
export const SERVICE_PROCESSES_DIR = join(projectRoot(), 'test-artifacts', 'service-processes');

async function startProcess(
  command: 'serve' | 'worker',
  mongodbUri: string,
  env: Record<string, string>,
  readyMsg: string,
): Promise<ServiceProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main/cli.ts', command], {
    env: {
      ...process.env,
      MONGODB_URI: mongodbUri,
      PORT: '0',
      BULK_CONCURRENCY: '2',
      BULK_LOCK_LIFETIME_MS: '10000',
      BULK_POLL_INTERVAL_MS: '100',
      LOG_LEVEL: 'info',
      // No readiness delay on SIGTERM unless a test asks for one (test/main/shutdown.test.ts).
      SHUTDOWN_READY_DELAY_MS: '0',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: Record<string, unknown>[] = [];
  const stderr: string[] = [];
  let buffered = '';
  child.stdout.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    const complete = buffered.split('\n');
    buffered = complete.pop()!;
    for (const line of complete.filter(Boolean)) lines.push(JSON.parse(line));
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr.push(chunk.toString());
    process.stderr.write(chunk);
  });
  const pidFile = join(SERVICE_PROCESSES_DIR, String(child.pid));
  mkdirSync(SERVICE_PROCESSES_DIR, { recursive: true });
  // The test process's parent is the run's main process (vitest's forks pool), whose teardown kills it if it is left.
  writeFileSync(pidFile, `subsvc ${command}\n${process.ppid}\n`);
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      rmSync(pidFile, { force: true });
      resolve();
    }),
  );
  const deadline = Date.now() + 30_000;
  while (!lines.some((l) => l.msg === readyMsg)) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`the ${command} process did not start: ${stderr.join('')}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    child,
    lines,
    stderr,
    exited,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}

export function startWorker(mongodbUri: string, env: Record<string, string> = {}): Promise<WorkerProcess> {
  return startProcess('worker', mongodbUri, env, 'bulk workers started');
}

/** `subsvc serve` on an ephemeral loopback port. */
export async function startServe(mongodbUri: string, env: Record<string, string> = {}): Promise<ServeProcess> {
  const started = await startProcess('serve', mongodbUri, env, 'service listening');
  const baseUrl = String(started.lines.find((l) => l.msg === 'service listening')!.url);
  return { ...started, baseUrl };
}
