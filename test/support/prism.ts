/** Prism (the partner teams' mock, and a contract referee in proxy mode) as a child process on loopback. */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { canConnect, freePort } from '../../src/lib/net.js';
import { SPEC_PATH } from '../../src/lib/spec.js';
import { writeMockSpec } from '../../scripts/mock-spec.js';
import { projectRoot } from '../../src/lib/project-root.js';

export interface RunningPrism {
  readonly baseUrl: string;
  readonly output: () => string;
  stop(): Promise<void>;
}

/**
 * `prism mock` on the mock's spec, as `npm run mock` serves it (scripts/mock-spec.ts), or
 * `prism proxy SPEC UPSTREAM --errors` on the spec as written when an upstream is given.
 */
export async function startPrism(upstream?: string): Promise<RunningPrism> {
  const port = await freePort();
  const args = upstream ? ['proxy', SPEC_PATH, upstream, '--errors'] : ['mock', writeMockSpec()];
  const child: ChildProcess = spawn(
    join(projectRoot(), 'node_modules', '.bin', 'prism'),
    [...args, '-h', '127.0.0.1', '-p', String(port)],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const deadline = Date.now() + 60_000;
  while (!(await canConnect(port))) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`prism did not start:\n${output}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    output: () => output,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
