/**
 * `npm run check:breaking`: fails when openapi/openapi.yaml breaks a client of the last released
 * contract (openapi/released/openapi-2.0.0.yaml), unless the break is listed, with its reason, in
 * openapi/released/accepted-breaking-changes.txt, so that every intentional break shows in review.
 *
 * The tool is oasdiff (removed fields, narrowed enums, new required parameters, ~300 checks; reads
 * OpenAPI 3.1), built once from the Go module proxy into .cache/ as FerretDB is: it then runs
 * offline and sends nothing anywhere. (`@useoptic/optic` from npm would do the same diff, but it is
 * a far larger install for one command.) The baseline is a committed file rather than a git tag:
 * a fresh clone, as CI makes, has it without fetching tags.
 *
 *   tsx scripts/check-breaking.ts [--spec FILE]   FILE instead of openapi/openapi.yaml
 */
import { execFile, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { projectRoot } from '../src/lib/project-root.js';

const run = promisify(execFile);
const root = projectRoot();
const OASDIFF_MODULE = 'github.com/oasdiff/oasdiff';
const OASDIFF_VERSION = 'v1.36.0';
const BASELINE = join(root, 'openapi', 'released', 'openapi-2.0.0.yaml');
const ACCEPTED = join(root, 'openapi', 'released', 'accepted-breaking-changes.txt');

async function ensureOasdiff(): Promise<string> {
  const dir = join(root, '.cache', 'oasdiff', OASDIFF_VERSION);
  const binary = join(dir, 'oasdiff');
  if (existsSync(binary)) return binary;
  console.error(
    `building oasdiff ${OASDIFF_VERSION} (first run only): downloading ${OASDIFF_MODULE} and its Go module ` +
      'dependencies from the Go module proxy (kept in the Go module cache), then compiling a 27 MB binary ' +
      `into ${relative(root, dir)}/ (2.5 minutes measured here with an empty module cache)...`,
  );
  const started = performance.now();
  const ticker = setInterval(
    () => console.error(`  still building oasdiff (${Math.round((performance.now() - started) / 1000)} s)`),
    30_000,
  );
  try {
    await run('go', ['install', `${OASDIFF_MODULE}@${OASDIFF_VERSION}`], {
      env: { ...process.env, GOBIN: dir, GOFLAGS: '-modcacherw' },
      maxBuffer: 16 * 1024 * 1024,
    });
  } finally {
    clearInterval(ticker);
  }
  console.error(`oasdiff built in ${Math.round((performance.now() - started) / 1000)} s`);
  return binary;
}

/** oasdiff is built with Go on first use: without either, the check cannot run, and says how to make it run. */
function oasdiffCanBeHad(): boolean {
  if (existsSync(join(root, '.cache', 'oasdiff', OASDIFF_VERSION, 'oasdiff'))) return true;
  if (spawnSync('sh', ['-c', 'command -v go']).status === 0) return true;
  const why = `oasdiff ${OASDIFF_VERSION} is built from source with Go, which is not installed: install Go (https://go.dev/dl/)`;
  if (process.env.CHECK_ALLOW_SKIP === '1') {
    console.error(`SKIPPED  breaking-change check: ${why} (CHECK_ALLOW_SKIP=1)`);
    return false;
  }
  console.error(`FAILED   breaking-change check: ${why}; or set CHECK_ALLOW_SKIP=1 to skip this step`);
  process.exit(2);
}

const at = process.argv.indexOf('--spec');
const spec = at > 0 ? process.argv[at + 1]! : join(root, 'openapi', 'openapi.yaml');
if (!oasdiffCanBeHad()) process.exit(0);
const oasdiff = await ensureOasdiff();
const args = ['breaking', BASELINE, spec, '--fail-on', 'ERR', '--err-ignore', ACCEPTED, '--format', 'singleline'];
try {
  const { stdout } = await run(oasdiff, args, { maxBuffer: 16 * 1024 * 1024 });
  if (stdout.trim() && !stdout.startsWith('No breaking changes')) process.stderr.write(stdout);
  console.error(`no breaking change against ${relative(root, BASELINE)} (accepted ones: ${relative(root, ACCEPTED)})`);
} catch (error) {
  const { stdout, stderr } = error as { stdout?: string; stderr?: string };
  if (!stdout) {
    console.error(`oasdiff failed: ${stderr?.trim() || String(error)}`);
    process.exit(2);
  }
  console.error(
    `${relative(root, spec)} breaks clients of the released contract ${relative(root, BASELINE)}:\n` +
      stdout.trim() +
      `\nRevert the change, or accept the break: add its line (method, path and the description above) with the reason to ${relative(root, ACCEPTED)}.`,
  );
  process.exit(1);
}
