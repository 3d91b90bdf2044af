/**
 * `npm run check` on a machine that lacks a toolchain: it installs nothing with apt-get, and each
 * step that cannot run is skipped with one line saying how to run it, recorded for the closing
 * lines of `npm test`, while the rest of the check runs and passes.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/lib/project-root.js';
import { skippedSince } from '../../scripts/skipped-steps.js';

let bin: string;
let scratch: string;
const aptCalled = () => existsSync(join(bin, 'apt-get.called'));

/** A PATH with a shell and node but no promtool, python3, Go or Java, and an apt-get that only notes that it was called. */
beforeAll(() => {
  bin = mkdtempSync(join(tmpdir(), 'check-path-'));
  scratch = mkdtempSync(join(tmpdir(), 'check-cache-'));
  symlinkSync('/bin/sh', join(bin, 'sh'));
  symlinkSync(process.execPath, join(bin, 'node'));
  writeFileSync(join(bin, 'apt-get'), `#!/bin/sh\ntouch ${join(bin, 'apt-get.called')}\nexit 1\n`);
  chmodSync(join(bin, 'apt-get'), 0o755);
});
afterAll(() => {
  rmSync(bin, { recursive: true, force: true });
  rmSync(scratch, { recursive: true, force: true });
});

/** A check script with that PATH, an empty cache for the Go-built tools, and a skip record of its own. */
function runScript(script: string, record: string) {
  const env = { ...process.env, PATH: bin, GO_TOOLS_CACHE: join(scratch, 'cache'), SKIPPED_STEPS_FILE: join(scratch, record) };
  return spawnSync(process.execPath, ['--import', 'tsx', script], { cwd: projectRoot(), env, encoding: 'utf8', timeout: 60_000 });
}

const recorded = (record: string) => skippedSince(0, join(scratch, record)).map((step) => step.what);

describe('npm run check without Go, python3 or Java', () => {
  it('skips promtool and hadolint with one line each saying how to run them, runs no apt-get, and passes on the rest', () => {
    const run = runScript('scripts/check-deploy.ts', 'deploy.jsonl');
    expect(run.stderr).toMatch(
      /^SKIPPED {2}promtool check config, check rules, test rules: promtool v0\.\d+\.\d+ is built from source with Go, which is not installed; to run it: install Go .*: npm run check:deploy$/m,
    );
    expect(run.stderr).toMatch(/^SKIPPED {2}Dockerfile \(hadolint\): .*; to run it: apt-get install python3-venv .*$/m);
    expect(run.stderr).toMatch(/^ok {7}deploy\/compose\.yaml/m);
    expect(run.stderr).not.toMatch(/FAILED/);
    expect(run.status).toBe(0);
    expect(recorded('deploy.jsonl')).toEqual(['Dockerfile (hadolint)', 'promtool check config, check rules, test rules']);
    expect(aptCalled()).toBe(false);
  });

  it('skips the breaking-change check with one line when oasdiff is not built, and passes', () => {
    const run = runScript('scripts/check-breaking.ts', 'breaking.jsonl');
    expect(run.stderr.trim()).toMatch(
      /^SKIPPED {2}breaking-change check: oasdiff v\d+\.\d+\.\d+ is built from source with Go, which is not installed; to run it: install Go .*: npm run check:breaking$/,
    );
    expect(run.status).toBe(0);
    expect(recorded('breaking.jsonl')).toEqual(['breaking-change check']);
  });

  it('without Java, skips the drift check of generated/ and clients/ with one line, and passes', () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/generate.ts', '--check'], {
      cwd: projectRoot(),
      env: { ...process.env, PATH: bin, SKIPPED_STEPS_FILE: join(scratch, 'generated.jsonl') },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(run.stderr.trim()).toMatch(
      /^SKIPPED {2}generated\/ and clients\/ drift check: .*Java 11\+.*; to run it: install Java .*npm run check:generated$/,
    );
    expect(run.status).toBe(0);
    expect(recorded('generated.jsonl')).toEqual(['generated/ and clients/ drift check']);
  });
});
