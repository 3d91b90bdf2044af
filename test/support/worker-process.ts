/** A `subsvc worker` process on the test database, as an operator would run one. */
import { spawn, type ChildProcess } from 'node:child_process';

export interface WorkerProcess {
  readonly child: ChildProcess;
  readonly lines: Record<string, unknown>[];
  stop(signal?: NodeJS.Signals): Promise<void>;
}

export async function startWorker(mongodbUri: string, env: Record<string, string> = {}): Promise<WorkerProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'worker'], {
    env: { ...process.env, MONGODB_URI: mongodbUri, WORKERS: '2', BULK_LOCK_LIFETIME_MS: '10000', BULK_POLL_INTERVAL_MS: '100', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines: Record<string, unknown>[] = [];
  let buffered = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    const complete = buffered.split('\n');
    buffered = complete.pop()!;
    for (const line of complete.filter(Boolean)) lines.push(JSON.parse(line));
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const deadline = Date.now() + 30_000;
  while (!lines.some((l) => l.msg === 'bulk workers started')) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error('the worker process did not start');
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    child,
    lines,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}
