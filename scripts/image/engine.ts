/**
 * The container engine `npm run check:image` drives: Docker where its daemon answers, Debian's
 * podman otherwise. podman runs with runc (crun refuses the cgroup setup of the machines this
 * project is developed on), every container on the host's network and with explicit ulimits.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

export interface Engine {
  readonly name: 'podman' | 'docker';
  /** Runs the engine; throws with its output when it exits non-zero. Returns stdout. */
  run(args: readonly string[], options?: { input?: string; quiet?: boolean }): string;
  /** Runs the engine and returns its exit status and output, whatever the status. */
  attempt(args: readonly string[]): { status: number | null; output: string };
}

/** This process's hard limit of a resource (/proc/self/limits), which a container cannot exceed. */
function hardLimit(name: string, fallback: number): number {
  const line = readFileSync('/proc/self/limits', 'utf8')
    .split('\n')
    .find((l) => l.startsWith(name));
  const hard = line?.slice(name.length).trim().split(/\s+/)[1];
  return hard === undefined || hard === 'unlimited' ? fallback : Number(hard);
}

/**
 * Open files and processes per container, stated rather than left to the engine's defaults: as
 * many as the service could want, within what this process may give (runc cannot raise a hard limit).
 */
export const ULIMITS = [
  ['nofile', Math.min(65_536, hardLimit('Max open files', 65_536))],
  ['nproc', Math.min(16_384, hardLimit('Max processes', 16_384))],
].flatMap(([name, limit]) => ['--ulimit', `${name}=${limit}:${limit}`]);

function onPath(command: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${command}`]).status === 0;
}

function makeEngine(name: Engine['name'], prefix: readonly string[]): Engine {
  const attempt = (args: readonly string[], input?: string) => {
    const result = spawnSync(name, [...prefix, ...args], { encoding: 'utf8', input, maxBuffer: 64 * 1024 * 1024 });
    return {
      status: result.status,
      stdout: result.stdout ?? '',
      output: `${result.stdout ?? ''}${result.stderr ?? ''}${result.error ? String(result.error) : ''}`,
    };
  };
  return {
    name,
    run(args, options = {}) {
      const result = attempt(args, options.input);
      if (result.status !== 0)
        throw new Error(`${name} ${args.join(' ')} exited ${result.status}\n${result.output.trim().split('\n').slice(-30).join('\n')}`);
      return result.stdout;
    },
    attempt: (args) => attempt(args),
  };
}

/**
 * Docker when `docker info` reaches a daemon; podman (installed from Debian's packages when
 * missing and running as root) otherwise. Undefined, with the reason, when neither can run.
 */
export function findEngine(): { engine?: Engine; why?: string } {
  if (onPath('docker') && spawnSync('docker', ['info'], { stdio: 'ignore', timeout: 15_000 }).status === 0)
    return { engine: makeEngine('docker', []) };
  if (!onPath('podman') || !onPath('runc')) {
    if (process.getuid?.() !== 0 || !onPath('apt-get'))
      return {
        why: "no Docker daemon answers and podman with runc is not installed (install Debian's podman, runc and debootstrap as root)",
      };
    console.error("installing Debian's podman, runc and debootstrap (first run only) ...");
    const install = spawnSync(
      'sh',
      ['-c', 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq podman runc debootstrap >/dev/null'],
      { stdio: 'inherit' },
    );
    if (install.status !== 0 || !onPath('podman'))
      return { why: `apt-get install podman runc debootstrap failed (exit ${install.status})` };
  }
  if (process.getuid?.() !== 0) return { why: 'not root: this check runs podman as root only (it sets up no rootless podman)' };
  const engine = makeEngine('podman', ['--runtime', 'runc']);
  const probe = engine.attempt(['info', '--format', '{{.Host.OCIRuntime.Name}}']);
  if (probe.status !== 0) return { why: `podman info failed: ${probe.output.trim().split('\n').at(-1)}` };
  return { engine };
}
