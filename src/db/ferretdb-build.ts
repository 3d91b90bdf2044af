/**
 * Builds FerretDB v1 from the Go module proxy into a project-local cache on first use, with the
 * project's patches applied (FERRETDB_PATCHES, each header says why):
 * patches/ferretdb-v1.24.2-id-pushdown.patch serves `_id` equality and `$in`, and equality on a
 * field leading an index, from that index; patches/ferretdb-v1.24.2-push-slice.patch makes `$push`
 * honour `$slice`; patches/ferretdb-v1.24.2-update-batch.patch writes the documents one update
 * statement modifies in one transaction instead of one each.
 *
 * Why not plain `go install ...@v1.24.2`: the module's build/version/version.txt is empty, so a
 * binary installed that way panics at start ("Invalid build/version/version.txt"), and the
 * proxy refuses the version list that `go install` asks for. We download the module, copy it
 * to a writable directory, write the version file, apply the patches and build it there.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { pollUntil } from '../lib/retry.js';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { projectRoot } from '../lib/project-root.js';
import type { Logger } from '../logger.js';

const run = promisify(execFile);

const FERRETDB_MODULE = 'github.com/FerretDB/FerretDB';
export const FERRETDB_VERSION = 'v1.24.2';
export const FERRETDB_PATCHES: readonly string[] = ['id-pushdown', 'push-slice', 'update-batch'].map((name) =>
  join(projectRoot(), 'patches', `ferretdb-${FERRETDB_VERSION}-${name}.patch`),
);

export interface FerretdbBuild {
  /** Patches applied to the module source, in order; none builds upstream as released (for comparisons). */
  readonly patches: readonly string[];
}

const PATCHED: FerretdbBuild = { patches: FERRETDB_PATCHES };

/** The cache path names the patches by a hash of their text, so an edited patch gets a new build. */
export function ferretdbBinaryPath(cacheDir: string, build: FerretdbBuild = PATCHED): string {
  const hash = createHash('sha256');
  for (const patch of build.patches) hash.update(readFileSync(patch));
  const suffix = build.patches.length > 0 ? `-${hash.digest('hex').slice(0, 8)}` : '';
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

/** A build another process has under way is waited for this long before this one builds it too. */
const BUILD_WAIT_MS = 10 * 60_000;

/**
 * Whether this process builds it: false when another process is building it (its mark younger than
 * BUILD_WAIT_MS), so that two first runs at once (the image check beside the tests) compile it once.
 */
function takeBuild(mark: string): boolean {
  mkdirSync(dirname(mark), { recursive: true });
  try {
    mkdirSync(mark);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    if (Date.now() - statSync(mark).mtimeMs < BUILD_WAIT_MS) return false;
    rmSync(mark, { recursive: true, force: true });
    return takeBuild(mark);
  }
}

export async function ensureFerretdbBinary(cacheDir: string, log: Logger, build: FerretdbBuild = PATCHED): Promise<string> {
  const binary = ferretdbBinaryPath(cacheDir, build);
  if (existsSync(binary)) return binary;
  const mark = `${binary}.building`;
  if (!takeBuild(mark)) {
    log.child({}, { level: 'info' }).info({ binary }, 'waiting for the FerretDB build another process has under way');
    await pollUntil(
      { withinMs: BUILD_WAIT_MS, everyMs: 1000 },
      async () => existsSync(mark),
      (building) => !building,
    );
    return ensureFerretdbBinary(cacheDir, log, build);
  }
  try {
    return await buildFerretdb(binary, log, build);
  } finally {
    rmSync(mark, { recursive: true, force: true });
  }
}

async function buildFerretdb(binary: string, log: Logger, build: FerretdbBuild): Promise<string> {
  // A first start spends about a minute here: said at info level even where the caller logs less,
  // so that it does not look hung.
  const progress = log.child({ ferretdbBuild: FERRETDB_VERSION }, { level: 'info' });
  const started = performance.now();
  progress.info({ patches: build.patches, binary }, 'building FerretDB (first run only, about a minute)');
  const env = { ...process.env, GOFLAGS: '-modcacherw' };
  progress.info(
    { module: `${FERRETDB_MODULE}@${FERRETDB_VERSION}` },
    'downloading the module source from the Go module proxy (cached after the first time)',
  );
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
    for (const patch of build.patches) progress.info({ patch, with: await applyPatch(patch, work) }, 'patch applied');
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
