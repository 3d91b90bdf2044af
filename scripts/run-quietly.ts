import { execFileSync, type ExecFileSyncOptions } from 'node:child_process';

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
