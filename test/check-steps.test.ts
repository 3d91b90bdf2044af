/**
 * `npm run check` on a machine that lacks a tool: it installs nothing (no apt-get), and the step
 * that cannot run fails the check with the command that installs its tool, unless CHECK_ALLOW_SKIP=1.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../src/lib/project-root.js';

let bin: string;
const aptCalled = () => existsSync(join(bin, 'apt-get.called'));

/** A PATH with a shell and node but no promtool, python3 or Go, and an apt-get that only notes that it was called. */
beforeAll(() => {
  bin = mkdtempSync(join(tmpdir(), 'check-path-'));
  symlinkSync('/bin/sh', join(bin, 'sh'));
  symlinkSync(process.execPath, join(bin, 'node'));
  writeFileSync(join(bin, 'apt-get'), `#!/bin/sh\ntouch ${join(bin, 'apt-get.called')}\nexit 1\n`);
  chmodSync(join(bin, 'apt-get'), 0o755);
});
afterAll(() => rmSync(bin, { recursive: true, force: true }));

function checkDeploy(env: Record<string, string>) {
  return spawnSync(process.execPath, ['--import', 'tsx', 'scripts/check-deploy.ts'], {
    cwd: projectRoot(),
    env: { ...process.env, PATH: bin, CHECK_ALLOW_SKIP: '', ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
}

describe('npm run check without promtool or python3', () => {
  it('fails, naming the command that installs each missing tool, and runs no apt-get', () => {
    const run = checkDeploy({});
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(
      "FAILED   promtool check config, check rules, test rules: promtool is not installed: apt-get install prometheus (Debian's package); or set CHECK_ALLOW_SKIP=1 to skip this step",
    );
    expect(run.stderr).toMatch(
      /FAILED {3}Dockerfile \(hadolint\): .*python3 is missing: apt-get install python3-venv; or set CHECK_ALLOW_SKIP=1/,
    );
    expect(aptCalled()).toBe(false);
  });

  it('with CHECK_ALLOW_SKIP=1, skips those steps, says so, and passes on the rest', () => {
    const run = checkDeploy({ CHECK_ALLOW_SKIP: '1' });
    expect(run.stderr).toMatch(/^SKIPPED {2}promtool check config, check rules, test rules: .* \(CHECK_ALLOW_SKIP=1\)$/m);
    expect(run.stderr).toMatch(/^SKIPPED {2}Dockerfile \(hadolint\): .* \(CHECK_ALLOW_SKIP=1\)$/m);
    expect(run.stderr).toMatch(/^ok {7}deploy\/compose\.yaml/m);
    expect(run.status).toBe(0);
    expect(aptCalled()).toBe(false);
  });
});

describe('the breaking-change check without Go and no oasdiff built', () => {
  it('needs Go only to build oasdiff: passes without it where oasdiff is built, else fails naming how to install Go (skips with CHECK_ALLOW_SKIP=1)', () => {
    // A copy of the project's cache without oasdiff is too much to make: run only where none is built.
    const built = existsSync(join(projectRoot(), '.cache', 'oasdiff'));
    if (built) console.log('oasdiff is built in .cache/: the check needs no Go here, so its missing-Go message is not reachable');
    const run = (env: Record<string, string>) =>
      spawnSync(process.execPath, ['--import', 'tsx', 'scripts/check-breaking.ts'], {
        cwd: projectRoot(),
        env: { ...process.env, PATH: bin, ...env },
        encoding: 'utf8',
        timeout: 60_000,
      });
    const strict = run({ CHECK_ALLOW_SKIP: '' });
    if (built) {
      expect(strict.status).toBe(0);
      return;
    }
    expect(strict.status).toBe(2);
    expect(strict.stderr).toMatch(/FAILED {3}breaking-change check: .*install Go \(https:\/\/go\.dev\/dl\/\); or set CHECK_ALLOW_SKIP=1/);
    expect(run({ CHECK_ALLOW_SKIP: '1' }).status).toBe(0);
  });
});
