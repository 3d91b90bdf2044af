/**
 * Builds the packages from the sources committed under clients/ into clients/dist/ (gitignored):
 *   subsvc-client-<version>.tgz                 npm pack of @subsvc/client, compiled by the project's tsc
 *   subsvc_client-<version>-py3-none-any.whl    python -m build --wheel, with build and setuptools pinned in
 *                                               scripts/clients/build-requirements.txt (.cache/python-build)
 * Each is built in a copy of its folder, so that clients/ holds only what the generator wrote
 * (its drift check compares the folders file by file).
 *   tsx scripts/clients/build.ts    what npm run generate does after generating, alone
 */
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { projectRoot } from '../../src/lib/project-root.js';
import { runQuietly } from '../run-quietly.js';
import { cachedVenv } from '../python-venv.js';

export const CLIENTS = join(projectRoot(), 'clients');
export const DIST = join(CLIENTS, 'dist');

export interface BuiltPackages {
  readonly tarball: string;
  readonly wheel: string;
}

function inCopyOf(folder: string, build: (copy: string) => void): void {
  const scratch = mkdtempSync(join(tmpdir(), `subsvc-${folder}-build-`));
  try {
    cpSync(join(CLIENTS, folder), scratch, { recursive: true });
    build(scratch);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

function buildTarball(): string {
  let name = '';
  inCopyOf('typescript', (copy) => {
    runQuietly(join(projectRoot(), 'node_modules', '.bin', 'tsc'), ['-p', join(copy, 'tsconfig.json')]);
    const packed = runQuietly('npm', ['pack', '--json', '--pack-destination', DIST], { cwd: copy });
    name = (JSON.parse(packed) as { filename: string }[])[0]!.filename;
  });
  return join(DIST, name);
}

function buildWheel(): string {
  const python = cachedVenv(
    'python-build',
    join(projectRoot(), 'scripts', 'clients', 'build-requirements.txt'),
    'the wheel build (build, setuptools)',
  );
  const before = new Set(readdirSync(DIST));
  inCopyOf('python', (copy) => {
    runQuietly(python, ['-m', 'build', '--wheel', '--no-isolation', '--outdir', DIST, copy]);
  });
  const wheel = readdirSync(DIST).find((f) => f.endsWith('.whl') && !before.has(f));
  if (!wheel) throw new Error(`python -m build left no new wheel in ${DIST}`);
  return join(DIST, wheel);
}

/** Both packages, built afresh into clients/dist/ (emptied first, so that only this build's files are there). */
export function buildPackages(): BuiltPackages {
  rmSync(DIST, { recursive: true, force: true });
  mkdirSync(DIST, { recursive: true });
  return { tarball: buildTarball(), wheel: buildWheel() };
}

export function describeBuilt({ tarball, wheel }: BuiltPackages): string[] {
  return [`built ${relative(projectRoot(), tarball)} (npm install it)`, `built ${relative(projectRoot(), wheel)} (pip install it)`];
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  for (const line of describeBuilt(buildPackages())) console.error(line);
}
