import { execFileSync, type ExecFileSyncOptions, spawn } from 'node:child_process';

/** Runs a command with its output kept back, shown only when it fails (with the error thrown); returns its stdout. */
export function runQuietly(command: string, args: readonly string[], options: ExecFileSyncOptions = {}): string {
  try {
    return execFileSync(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string };
    process.stderr.write(`${e.stdout ?? ''}${e.stderr ?? ''}`);
    throw error;
  }
}

/**
 * Runs a command without blocking this process (the service it is tested against may run here),
 * its stdout and stderr collected in the order they came; resolves with its exit status (1 when a
 * signal ended it) and that output.
 */
export function runCollected(
  command: string,
  args: readonly string[],
  options: { readonly cwd: string; readonly env: NodeJS.ProcessEnv },
): Promise<{ status: number; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ status: code ?? 1, output: Buffer.concat(chunks).toString('utf8') }));
  });
}
