/**
 * `npm run check:breaking`: fails when openapi/openapi.yaml breaks a client of the last released
 * contract (openapi/released/openapi-2.0.0.yaml), unless the break is listed, with its reason, in
 * openapi/released/accepted-breaking-changes.txt, so that every intentional break shows in review.
 *
 * The tool is oasdiff (removed fields, narrowed enums, new required parameters, ~300 checks; reads
 * OpenAPI 3.1), built once from the Go module proxy into .cache/ (scripts/go-tool.ts): it then
 * runs offline and sends nothing anywhere. Without Go the step is skipped, saying so in one line.
 * (`@useoptic/optic` from npm would do the same diff, but it is a far larger install for one
 * command.) The baseline is a committed file rather than a git tag: a fresh clone, as CI makes,
 * has it without fetching tags.
 *
 *   tsx scripts/check-breaking.ts [--spec FILE]   FILE instead of openapi/openapi.yaml
 */
import { execFile } from 'node:child_process';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { projectRoot } from '../src/lib/project-root.js';
import { ensureGoTool, goToolCanBeHad, INSTALL_GO, OASDIFF } from './go-tool.js';
import { skipStep } from './skipped-steps.js';

const run = promisify(execFile);
const root = projectRoot();
const BASELINE = join(root, 'openapi', 'released', 'openapi-2.0.0.yaml');
const ACCEPTED = join(root, 'openapi', 'released', 'accepted-breaking-changes.txt');

const at = process.argv.indexOf('--spec');
const spec = at > 0 ? process.argv[at + 1]! : join(root, 'openapi', 'openapi.yaml');
if (!goToolCanBeHad(OASDIFF)) {
  skipStep(
    'breaking-change check',
    `oasdiff ${OASDIFF.version} is built from source with Go, which is not installed`,
    `${INSTALL_GO}: npm run check:breaking`,
  );
  process.exit(0);
}
const oasdiff = await ensureGoTool(OASDIFF);
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
