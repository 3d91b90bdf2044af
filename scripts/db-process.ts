/**
 * The CPU used so far by the database server a URI points at, when it runs on this machine: the
 * process whose command line names the URI's port (the embedded FerretDB's `--listen-addr=…:port`,
 * a local `mongod --port port`), read from /proc. Undefined when there is none (a remote server,
 * a machine without /proc), and the bench then prints no database figure.
 */
import { readdirSync, readFileSync } from 'node:fs';

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

export function databaseProcess(uri: string): { pid: number; cpuUs(): number } | undefined {
  const port = new URL(uri).port || '27017';
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return undefined;
  }
  for (const pid of pids) {
    let args: string[];
    try {
      args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    } catch {
      continue;
    }
    const binary = args[0] ?? '';
    const named = args.some(
      (arg, i) => (arg.startsWith('--listen-addr=') && arg.endsWith(`:${port}`)) || (arg === '--port' && args[i + 1] === port),
    );
    if (named && !binary.endsWith('sh')) return { pid: Number(pid), cpuUs: () => cpuUsOf(Number(pid)) };
  }
  return undefined;
}

function cpuUsOf(pid: number): number {
  // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND) * 1e6;
}
