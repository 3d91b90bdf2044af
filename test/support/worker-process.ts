/** `subsvc worker` and `subsvc serve` processes on the test database, as an operator would run them. */
import { spawn, type ChildProcess } from 'node:child_process';

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

export interface ServeProcess extends ServiceProcess {
  readonly baseUrl: string;
}

async function startProcess(command: 'serve' | 'worker', mongodbUri: string, env: Record<string, string>, readyMsg: string): Promise<ServiceProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main/cli.ts', command], {
    env: {
      ...process.env,
      MONGODB_URI: mongodbUri,
      PORT: '0',
      BULK_CONCURRENCY: '2',
      BULK_LOCK_LIFETIME_MS: '10000',
      BULK_POLL_INTERVAL_MS: '100',
      LOG_LEVEL: 'info',
      // No readiness delay on SIGTERM unless a test asks for one (test/shutdown.test.ts).
      SHUTDOWN_READY_DELAY_MS: '0',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: Record<string, unknown>[] = [];
  const stderr: string[] = [];
  let buffered = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    const complete = buffered.split('\n');
    buffered = complete.pop()!;
    for (const line of complete.filter(Boolean)) lines.push(JSON.parse(line));
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr.push(chunk.toString());
    process.stderr.write(chunk);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
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
