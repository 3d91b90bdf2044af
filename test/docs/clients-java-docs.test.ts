/**
 * docs/clients-java.md, as printed, against the service: the jar built as `npm run test:clients`
 * builds it (into clients/dist/), installed by the page's own command, a Maven project made of the
 * page's pom.xml and program, run by the page's command, for one merchant and one subscription as a
 * reader with npm start's summary has. Maven's repository is the project's .cache/m2 (MAVEN_OPTS),
 * never the reader's ~/.m2. Skipped, saying why, without Java 11+ and Maven.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIST } from '../../scripts/clients/build.js';
import { specVersion } from '../../scripts/clients/generate.js';
import { javaDist, javaMissing, MAVEN_REPOSITORY } from '../../scripts/clients/java.js';
import { projectRoot } from '../../src/lib/project-root.js';
import { SPEC_PATH } from '../../src/lib/spec.js';
import { call } from '../support/http.js';
import { startTestService, type TestService } from '../support/service.js';

const page = readFileSync(join(projectRoot(), 'docs', 'clients-java.md'), 'utf8');
const block = (language: string) => [...page.matchAll(new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\`\`\``, 'g'))].map((m) => m[1]!);
/** The command the page says runs the program, in the project's folder. */
const RUN = 'mvn -q compile exec:java';
const missing = javaMissing();

let t: TestService | undefined;
let project: string;
let apiKey: string;
let subscriptionId: string;

interface Run {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** A shell command of the page, with Maven's repository the project's; asynchronously, as the service answering it runs in this process. */
function sh(command: string, cwd: string, env: Record<string, string> = {}): Promise<Run> {
  const fullEnv = { ...process.env, MAVEN_OPTS: `-Dmaven.repo.local=${MAVEN_REPOSITORY}`, ...env };
  return new Promise((resolve) => {
    execFile('/bin/sh', ['-c', command], { cwd, env: fullEnv, encoding: 'utf8', timeout: 480_000 }, (error, stdout, stderr) => {
      resolve({ status: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr });
    });
  });
}

beforeAll(async () => {
  if (missing) return;
  t = await startTestService();
  const merchant = await t.merchant();
  apiKey = merchant.apiKey;
  [subscriptionId] = (await t.seed(merchant.merchantId, 1)) as [string];
  await javaDist(specVersion(SPEC_PATH), DIST);
  project = mkdtempSync(join(tmpdir(), 'clients-java-docs-'));
}, 600_000);
afterAll(async () => {
  await t?.close();
  if (project) rmSync(project, { recursive: true, force: true });
});

describe('docs/clients-java.md, run as printed', () => {
  it('has one install command, one pom.xml and one program, which points at npm start and names the run command', () => {
    expect([block('sh').length, block('xml').length, block('java').length]).toEqual([1, 1, 1]);
    expect(block('sh')[0]).toContain('mvn install:install-file');
    expect(block('java')[0]).toContain('http://127.0.0.1:8080');
    expect(page).toContain(`run with \`${RUN}\``);
  });

  it('the jar installs by its command, and the program compiles, runs against the service, ends with 0020 and leaves the subscription fulfilled', async (context) => {
    if (missing) {
      console.log(`clients-java-docs: not run: ${missing}`);
      context.skip();
    }
    const install = await sh(block('sh')[0]!.replaceAll('/path/to/this/repository', projectRoot()), project);
    expect(install.status, install.stdout + install.stderr).toBe(0);
    writeFileSync(join(project, 'pom.xml'), block('xml')[0]!);
    mkdirSync(join(project, 'src', 'main', 'java'), { recursive: true });
    writeFileSync(join(project, 'src', 'main', 'java', 'Example.java'), block('java')[0]!);
    const run = await sh(RUN, project, { SUBSVC_URL: t!.baseUrl, API_KEY: apiKey, SUBSCRIPTION_ID: subscriptionId });
    expect(run.status, run.stdout + run.stderr).toBe(0);
    // Maven colours its output even when quiet: what the reader sees is the text.
    const lines = stripVTControlCharacters(run.stdout).trim().split('\n');
    expect(lines.at(-1)).toBe('0020');
    expect(lines.at(-2)).toMatch(/^404 Subscription 00000000-0000-4000-8000-000000000000 not found \S+$/);
    expect(lines).toContain('1 subscriptions');
    const subscription = await call(t!.baseUrl, `/v2/subscriptions/${subscriptionId}`, { method: 'GET', apiKey });
    expect(subscription.body.status).toBe('fulfilled');
  }, 600_000);
});
