/** Containers of the built image, on the host's network, and what the check reads of them. */
import { readFileSync } from 'node:fs';
import { ULIMITS, type Engine } from './engine.js';

export interface Container {
  readonly name: string;
  readonly role: string;
}

export function runDetached(engine: Engine, image: string, name: string, env: Record<string, string>, args: string[]): Container {
  engine.run(['run', '--detach', '--name', name, '--network', 'host', ...ULIMITS, ...envArgs(env), image, ...args]);
  return { name, role: args[0] ?? 'serve' };
}

/** A one-off command of the image's CLI (an admin command): its stdout, which is one JSON line. */
export function runOnce(engine: Engine, image: string, env: Record<string, string>, args: string[]): unknown {
  const out = engine.run(['run', '--rm', '--network', 'host', ...ULIMITS, ...envArgs(env), image, ...args]);
  return JSON.parse(out.trim().split('\n').at(-1) ?? '');
}

/** The top-level entries of the image's node_modules (scoped packages by their scope folder). */
export function modulesOf(engine: Engine, image: string): string[] {
  const out = engine.run(['run', '--rm', '--network', 'host', ...ULIMITS, '--entrypoint', 'ls', image, '-1', 'node_modules']);
  return out.split('\n').filter(Boolean);
}

function envArgs(env: Record<string, string>): string[] {
  return Object.entries(env).flatMap(([k, v]) => ['--env', `${k}=${v}`]);
}

export function logsOf(engine: Engine, container: Container): string {
  return engine.attempt(['logs', '--tail', '40', container.name]).output;
}

/** The real and effective uids of the container's main process, read from the host's /proc. */
export function uidsOf(engine: Engine, container: Container): number[] {
  const pid = engine.run(['inspect', '--format', '{{.State.Pid}}', container.name]).trim();
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('Uid:'));
  return (line ?? '').split(/\s+/).slice(1).filter(Boolean).map(Number);
}

/**
 * Runs the image's HEALTHCHECK once: `podman healthcheck run`; Docker has no such command, so
 * there the check waits for the engine's own runs to report healthy.
 */
export async function healthcheck(engine: Engine, container: Container, timeoutMs: number): Promise<string> {
  if (engine.name === 'podman') {
    const result = engine.attempt(['healthcheck', 'run', container.name]);
    return result.status === 0 ? 'healthy' : `unhealthy (${result.output.trim().split('\n').at(-1)})`;
  }
  const deadline = Date.now() + timeoutMs;
  let status = '';
  while (Date.now() < deadline) {
    status = engine.run(['inspect', '--format', '{{.State.Health.Status}}', container.name]).trim();
    if (status === 'healthy') return status;
    await new Promise((r) => setTimeout(r, 1000));
  }
  return status;
}

/** Sends SIGTERM and waits for the exit: its code and how long it took. */
export function stopWithSigterm(engine: Engine, container: Container): { exitCode: number; seconds: number } {
  const started = Date.now();
  engine.run(['kill', '--signal', 'TERM', container.name]);
  const exitCode = Number(engine.run(['wait', container.name]).trim());
  return { exitCode, seconds: (Date.now() - started) / 1000 };
}

export function remove(engine: Engine, containers: readonly Container[]): void {
  if (containers.length > 0) engine.attempt(['rm', '--force', ...containers.map((c) => c.name)]);
}
