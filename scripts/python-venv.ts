/** Python virtual environments: cached ones for tools (Schemathesis, the wheel build), scratch ones to install the client's wheel into. */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CACHE_DIR } from '../src/db/embedded.js';

const PIP_QUIET = ['--quiet', '--disable-pip-version-check'];

/** A new virtual environment at dir (python3 -m venv), said plainly when the machine has no usable python3. */
export function createVenv(dir: string, purpose: string): void {
  try {
    execFileSync('python3', ['-m', 'venv', dir], { stdio: ['ignore', 'ignore', 'inherit'] });
  } catch (error) {
    throw new Error(`${purpose} needs Python 3.10+ with its venv module as python3 (${String(error)})`, { cause: error });
  }
}

export function pipInstall(venv: string, args: readonly string[]): void {
  execFileSync(join(venv, 'bin', 'pip'), ['install', ...PIP_QUIET, ...args], { stdio: ['ignore', 'ignore', 'inherit'] });
}

/**
 * The venv's python in .cache/<name>, with the pinned requirements installed from PyPI; created on
 * first use and rebuilt when the requirements file changes (as scripts/fuzz.ts does for Schemathesis).
 */
export function cachedVenv(name: string, requirements: string, purpose: string): string {
  const venv = join(CACHE_DIR, name);
  const python = join(venv, 'bin', 'python');
  const stamp = join(venv, '.requirements-sha256');
  const wanted = createHash('sha256').update(readFileSync(requirements)).digest('hex');
  if (existsSync(python) && existsSync(stamp) && readFileSync(stamp, 'utf8') === wanted) return python;
  console.error(`installing ${purpose} into ${venv} (from PyPI; first run only) ...`);
  rmSync(venv, { recursive: true, force: true });
  mkdirSync(CACHE_DIR, { recursive: true });
  createVenv(venv, purpose);
  pipInstall(venv, ['-r', requirements]);
  writeFileSync(stamp, wanted);
  return python;
}
