/**
 * The Go client's part of the clients suite (scripts/clients/test.ts): a scratch module that requires
 * clients/go (a `replace` to this repository's copy, as a merchant would vendor it), the client
 * built and vetted, then clients/scenarios/go run by `go test -json`. Its events become a JUnit
 * report and one line per test in our words: `go test`'s own closing lines (`ok  pkg 1.2s`, `PASS`)
 * are read by CI as a runner's last line, so they stay in the console file.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { projectRoot } from '../../src/lib/project-root.js';
import { runCollected, runQuietly } from '../run-quietly.js';
import { GO_MODULE } from './generate.js';

const ROOT = projectRoot();
// The module proxy is the one the machine is set up for; no toolchain is downloaded for the scratch module.
const GO_ENV = { ...process.env, GOFLAGS: '-mod=mod', GOTOOLCHAIN: 'local' };

/** Why the Go scenarios cannot run here, or undefined when `go` is on the PATH. */
export function goMissing(): string | undefined {
  try {
    execFileSync('go', ['version'], { stdio: 'ignore' });
    return undefined;
  } catch {
    return 'no `go` on the PATH: the Go client is neither built nor run (install Go 1.23+ to run it)';
  }
}

/** A scratch module with the scenarios, requiring the client; the client built and vetted there. */
export function goProject(): string {
  const dir = mkdtempSync(join(tmpdir(), 'subsvc-merchant-go-'));
  for (const file of ['scenarios_test.go', 'layer_test.go']) cpSync(join(ROOT, 'clients', 'scenarios', 'go', file), join(dir, file));
  const goMod = [
    'module merchant-scenarios',
    '',
    'go 1.23',
    '',
    `require ${GO_MODULE} v0.0.0`,
    '',
    `replace ${GO_MODULE} => ${join(ROOT, 'clients', 'go')}`,
    '',
  ];
  writeFileSync(join(dir, 'go.mod'), goMod.join('\n'));
  runQuietly('go', ['mod', 'tidy'], { cwd: dir, env: GO_ENV });
  runQuietly('go', ['build', GO_MODULE], { cwd: dir, env: GO_ENV });
  runQuietly('go', ['vet', GO_MODULE, './...'], { cwd: dir, env: GO_ENV });
  return dir;
}

interface TestEvent {
  readonly Action: string;
  readonly Test?: string;
  readonly Elapsed?: number;
  readonly Output?: string;
}

const escapeXml = (text: string) => text.replace(/[<>&"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;' })[c]!);

/** `go test -json` events as a JUnit report, and one line per test for the console. */
export function goJunit(jsonLines: string): { xml: string; lines: string[] } {
  const output = new Map<string, string>();
  const cases: string[] = [];
  const lines: string[] = [];
  for (const line of jsonLines.split('\n')) {
    if (!line.startsWith('{')) continue;
    const event = JSON.parse(line) as TestEvent;
    if (!event.Test) continue;
    if (event.Action === 'output') output.set(event.Test, (output.get(event.Test) ?? '') + (event.Output ?? ''));
    if (!['pass', 'fail', 'skip'].includes(event.Action)) continue;
    const text = escapeXml(output.get(event.Test) ?? '');
    const body = { pass: '', fail: `<failure message="failed">${text}</failure>`, skip: `<skipped message="${text.trim()}"/>` }[
      event.Action
    ];
    cases.push(`<testcase classname="scenarios" name="${escapeXml(event.Test)}" time="${event.Elapsed ?? 0}">${body}</testcase>`);
    const word = { pass: 'passed', fail: 'FAILED', skip: 'skipped' }[event.Action];
    lines.push(`  ${event.Test} ${word}${event.Action === 'pass' ? '' : `\n${output.get(event.Test) ?? ''}`}`);
  }
  return { xml: `<?xml version="1.0" encoding="UTF-8"?>\n<testsuite name="go scenarios">\n${cases.join('\n')}\n</testsuite>\n`, lines };
}

/** The events `go test -json` prints; a failing test exits 1 with its events all the same, a build failure leaves none. */
async function goTestEvents(project: string, targetFile: string): Promise<string> {
  const args = ['test', '-json', '-count=1', '-timeout=5m', './...'];
  return (await runCollected('go', args, { cwd: project, env: { ...GO_ENV, SUBSVC_TARGET: targetFile } })).output;
}

/** Runs the scenarios against the target file's service or mock; leaves a JUnit report at `report`. */
export async function runGoScenarios(project: string, targetFile: string, report: string, consoleFile: string): Promise<void> {
  const events = await goTestEvents(project, targetFile);
  writeFileSync(consoleFile, events);
  const { xml, lines } = goJunit(events);
  // No test ran (the scenarios did not compile): no report, which the suite counts as a failure.
  if (lines.length > 0) writeFileSync(report, xml);
  console.log(lines.length > 0 ? lines.join('\n') : readFileSync(consoleFile, 'utf8'));
  console.log(`go test's full events: ${relative(ROOT, consoleFile)}`);
}
