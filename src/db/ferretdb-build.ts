/**
 * Builds FerretDB v1 from the Go module proxy into a project-local cache on first use, with the
 * project's patch applied (patches/ferretdb-v1.24.2-id-pushdown.patch: `_id` equality and `$in`
 * served from the `_id` index; its header says why).
 *
 * Why not plain `go install ...@v1.24.2`: the module's build/version/version.txt is empty, so a
 * binary installed that way panics at start ("Invalid build/version/version.txt"), and the
 * proxy refuses the version list that `go install` asks for. We download the module, copy it
 * to a writable directory, write the version file, apply the patch and build it there.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { projectRoot } from '../lib/project-root.js';
import type { Logger } from '../logger.js';

const run = promisify(execFile);

const FERRETDB_MODULE = 'github.com/FerretDB/FerretDB';
export const FERRETDB_VERSION = 'v1.24.2';
export const FERRETDB_PATCH = join(projectRoot(), 'patches', `ferretdb-${FERRETDB_VERSION}-id-pushdown.patch`);

export interface FerretdbBuild {
  /** A patch to apply to the module source; null builds upstream as released (for comparisons). */
  readonly patch: string | null;
}

/** The cache path names the patch by a hash of its text, so an edited patch gets a new build. */
export function ferretdbBinaryPath(cacheDir: string, build: FerretdbBuild = { patch: FERRETDB_PATCH }): string {
  const suffix = build.patch ? `-${createHash('sha256').update(readFileSync(build.patch)).digest('hex').slice(0, 8)}` : '';
  return join(cacheDir, 'ferretdb', `${FERRETDB_VERSION}${suffix}`, 'ferretdb');
}

/** `git apply`, or `patch` where git is missing; either refuses a patch that does not fit. */
async function applyPatch(patch: string, work: string): Promise<string> {
  // The module cache's copy is read-only: make the patched files and their folders writable.
  for (const [, file] of readFileSync(patch, 'utf8').matchAll(/^\+\+\+ b\/(\S+)/gm)) {
    chmodSync(dirname(join(work, file!)), 0o755);
    chmodSync(join(work, file!), 0o644);
  }
  try {
    // The ceiling keeps git from taking an enclosing repository's root as the patch's base.
    await run('git', ['apply', patch], { cwd: work, env: { ...process.env, GIT_CEILING_DIRECTORIES: dirname(work) } });
    return 'git apply';
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  await run('patch', ['-p1', '--batch', '--forward', '-i', patch], { cwd: work });
  return 'patch -p1';
}

export async function ensureFerretdbBinary(cacheDir: string, log: Logger, build: FerretdbBuild = { patch: FERRETDB_PATCH }): Promise<string> {
  const binary = ferretdbBinaryPath(cacheDir, build);
  if (existsSync(binary)) return binary;
  // A first start spends about a minute here: said at info level even where the caller logs less,
  // so that it does not look hung.
  const progress = log.child({ ferretdbBuild: FERRETDB_VERSION }, { level: 'info' });
  const started = performance.now();
  progress.info({ patch: build.patch, binary }, 'building FerretDB (first run only, about 1-2 minutes)');
  const env = { ...process.env, GOFLAGS: '-modcacherw' };
  progress.info({ module: `${FERRETDB_MODULE}@${FERRETDB_VERSION}` }, 'downloading the module source from the Go module proxy (cached after the first time)');
  const { stdout } = await run('go', ['mod', 'download', '-json', `${FERRETDB_MODULE}@${FERRETDB_VERSION}`], {
    env,
    maxBuffer: 16 * 1024 * 1024,
  });
  const moduleDir = (JSON.parse(stdout) as { Dir: string }).Dir;
  const work = mkdtempSync(join(tmpdir(), 'ferretdb-build-'));
  try {
    cpSync(moduleDir, work, { recursive: true });
    chmodSync(join(work, 'build', 'version'), 0o755);
    writeFileSync(join(work, 'build', 'version', 'version.txt'), `${FERRETDB_VERSION}\n`);
    if (build.patch) progress.info({ with: await applyPatch(build.patch, work) }, 'patch applied');
    mkdirSync(dirname(binary), { recursive: true });
    // Per process: two first starts at once (test runs of several checkouts) must not share it.
    const partial = `${binary}.${process.pid}.partial`;
    progress.info('compiling (downloads the module dependencies the first time)');
    await run('go', ['build', '-o', partial, './cmd/ferretdb'], { cwd: work, env, maxBuffer: 16 * 1024 * 1024 });
    renameSync(partial, binary);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  progress.info({ binary, seconds: Math.round((performance.now() - started) / 100) / 10 }, 'FerretDB built');
  return binary;
}
