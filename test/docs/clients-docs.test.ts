/**
 * docs/clients.md's examples, as printed and in page order, against the service: the packages built
 * from the spec and installed as the page says (the tarball into a scratch Node project beside
 * standardwebhooks and tsx, the wheel into a scratch virtualenv), each example run by the command
 * the page gives, on a PATH like a reader's shell (no node_modules folder on it, so the system's
 * Node runs the TypeScript), for one merchant and one subscription, as a reader with npm start's
 * summary has. After each, the merchant has no webhook endpoint and the subscription is fulfilled
 * again: the next example depends on both. A webhook example whose pause fails removes its endpoint
 * too, and the TypeScript examples type-check (tsx runs them without checking; an editor checks).
 */
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIST } from '../../scripts/clients/build.js';
import { goMissing } from '../../scripts/clients/go.js';
import { createVenv, pipInstall } from '../../scripts/python-venv.js';
import { projectRoot } from '../../src/lib/project-root.js';
import { call } from '../support/http.js';
import { startTestService, type TestService } from '../support/service.js';

const page = readFileSync(join(projectRoot(), 'docs', 'clients.md'), 'utf8');
type Language = 'ts' | 'python' | 'go';
interface Example {
  readonly language: Language;
  readonly line: number;
  readonly source: string;
  readonly webhook: boolean;
}
/** Every TypeScript, Python and Go block of the page, in page order. */
const examples: readonly Example[] = [...page.matchAll(/```(ts|python|go)\n([\s\S]*?)```/g)].map((m) => ({
  language: m[1] as Language,
  line: page.slice(0, m.index).split('\n').length,
  source: m[2]!,
  webhook: /create_?[wW]ebhook_?[eE]ndpoint/.test(m[2]!),
}));
/** The commands the page tells a reader to type, in the folder where the example is saved. */
const RUN = { ts: 'npx tsx example.mts', python: 'python example.py' } as const;
const BUILD = 'npx tsx scripts/clients/build.ts';
const NAME = { ts: 'TypeScript', python: 'Python', go: 'Go' } as const;
const FILE = { ts: 'example.mts', python: 'example.py', go: 'main.go' } as const;
/** The page's Go commands (the `sh` block that makes the module), the checkout's path in place of the placeholder. */
const goCommands = () =>
  [...page.matchAll(/```sh\n([\s\S]*?)```/g)]
    .map((m) => m[1]!)
    .find((block) => block.includes('go mod init'))!
    .replaceAll('/path/to/this/repository', projectRoot());

/** stderr less what is not a complaint: http.server's line per request it answers. */
const complaints = (stderr: string) => stderr.replace(/^.*"POST \/hooks HTTP\/1\.1" 204.*\n?/gm, '');
/** A reader's shell: no project's node_modules/.bin (npm run puts it first, with the project's Node 24). */
const readerPath = (process.env.PATH ?? '')
  .split(delimiter)
  .filter((dir) => !dir.includes('node_modules'))
  .join(delimiter);

let t: TestService;
let scratch: string;
let merchant: { apiKey: string };
let subscriptionId: string;
/** Why a language's examples cannot run on this machine, if so. */
const missing: Partial<Record<Language, string>> = {};

/** The tarball unpacked where `npm install` puts it; standardwebhooks and tsx as the project has them. */
function nodeProject(tarball: string): void {
  const modules = join(scratch, 'node_modules');
  mkdirSync(join(modules, '@subsvc'), { recursive: true });
  mkdirSync(join(modules, '.bin'));
  execFileSync('tar', ['-xzf', tarball, '-C', scratch]);
  renameSync(join(scratch, 'package'), join(modules, '@subsvc', 'client'));
  mkdirSync(join(modules, '@types'));
  for (const name of ['standardwebhooks', 'tsx', '@types/node'])
    symlinkSync(join(projectRoot(), 'node_modules', name), join(modules, name));
  symlinkSync('../tsx/dist/cli.mjs', join(modules, '.bin', 'tsx'));
  writeFileSync(join(scratch, 'package.json'), '{ "private": true }\n');
}

function onPath(command: string, path: string): boolean {
  try {
    execFileSync('/bin/sh', ['-c', `command -v ${command}`], { env: { ...process.env, PATH: path }, stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** The packages built as the page says, in this repository, on the reader's PATH when it has npx; the wheel only where python3 is. */
function buildAsPrinted(): void {
  try {
    execFileSync('/bin/sh', ['-c', BUILD], { cwd: projectRoot(), env: { ...process.env, ...(missing.ts ? {} : { PATH: readerPath }) } });
  } catch (error) {
    if (onPath('python3', process.env.PATH ?? '')) throw error;
    missing.python = 'no python3 on the PATH: the wheel is not built (Python 3.10+ with its venv module runs them)';
  }
}

beforeAll(async () => {
  t = await startTestService({ workers: 2 });
  scratch = mkdtempSync(join(tmpdir(), 'clients-docs-'));
  if (!onPath('npx', readerPath)) missing.ts = 'no `npx` on the PATH without node_modules (a system Node 18+ with npm runs them)';
  buildAsPrinted();
  const built = readdirSync(DIST);
  const packaged = (ext: string) => join(DIST, built.find((f) => f.endsWith(ext)) ?? `no ${ext} built`);
  const [tarball, wheel] = [packaged('.tgz'), packaged('.whl')];
  nodeProject(tarball);
  if (!missing.python) {
    createVenv(join(scratch, 'venv'), "docs/clients.md's Python examples");
    pipInstall(join(scratch, 'venv'), [
      '-c',
      join(projectRoot(), 'scripts', 'clients', 'scenario-requirements.txt'),
      wheel,
      'standardwebhooks',
    ]);
  }
  missing.go = goMissing();
  mkdirSync(join(scratch, 'go-example'));
  const created = await t.merchant();
  merchant = created;
  [subscriptionId] = (await t.seed(created.merchantId, 1)) as [string];
}, 600_000);
afterAll(async () => {
  await t?.close();
  rmSync(scratch, { recursive: true, force: true });
});

interface Run {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** One example saved where the page says and run by the page's command, with the environment the page names. */
async function runExample(example: Example, env: Record<string, string> = {}): Promise<Run> {
  const { language, source } = example;
  const cwd = language === 'go' ? join(scratch, 'go-example') : scratch;
  if (language === 'go') rmSync(join(cwd, 'go.mod'), { force: true });
  writeFileSync(join(cwd, FILE[language]), source);
  const path = language === 'python' ? `${join(scratch, 'venv', 'bin')}${delimiter}${readerPath}` : readerPath;
  const goEnv = { GOFLAGS: '-mod=mod', GOTOOLCHAIN: 'local' };
  const command = language === 'go' ? goCommands() : RUN[language];
  const fullEnv = {
    ...process.env,
    ...(language === 'go' ? goEnv : {}),
    PATH: path,
    SUBSVC_URL: t.baseUrl,
    API_KEY: merchant.apiKey,
    SUBSCRIPTION_ID: subscriptionId,
    ...env,
  };
  // Asynchronously: the service answering the example runs in this process.
  return new Promise((resolve) => {
    execFile('/bin/sh', ['-c', command], { cwd, env: fullEnv, encoding: 'utf8', timeout: 240_000 }, (error, stdout, stderr) => {
      resolve({ status: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr });
    });
  });
}

/** The merchant's webhook endpoints: what a webhook example must not leave behind. */
async function endpointsOf(apiKey: string): Promise<string[]> {
  const endpoints = await call(t.baseUrl, '/v2/webhook-endpoints', { method: 'GET', apiKey });
  return endpoints.body.data.map((e: { url: string }) => e.url);
}

/** What an example leaves behind that the next one would meet: the merchant's endpoints, the subscription's status. */
async function leftBehind(): Promise<{ endpoints: string[]; status: string }> {
  const subscription = await call(t.baseUrl, `/v2/subscriptions/${subscriptionId}`, { method: 'GET', apiKey: merchant.apiKey });
  return { endpoints: await endpointsOf(merchant.apiKey), status: subscription.body.status };
}

/** Skips a test of a language this machine has no toolchain for, saying so once in one line. */
const said = new Set<Language>();
function skipMissing(language: Language, context: { skip: () => void }): void {
  if (!missing[language]) return;
  if (!said.has(language)) console.log(`clients-docs: the ${NAME[language]} examples are not run: ${missing[language]}`);
  said.add(language);
  context.skip();
}

describe('docs/clients.md, run as printed in page order', () => {
  it("has the generated clients' examples (two TypeScript, two Python, one Go), then the client layer's in each, says how to run each, and points them at npm start", () => {
    expect(examples.map((e) => e.language)).toEqual(['ts', 'ts', 'python', 'python', 'go', 'ts', 'python', 'go']);
    for (const example of examples) expect(example.source).toContain('http://127.0.0.1:8080');
    for (const command of [BUILD, ...Object.values(RUN)]) expect(page).toContain(command);
    expect(goCommands()).toContain('go run .');
  });

  it('the TypeScript examples type-check against the installed package, strict', (context) => {
    skipMissing('ts', context);
    const dir = join(scratch, 'typecheck');
    mkdirSync(dir);
    examples.filter((e) => e.language === 'ts').forEach((e, i) => writeFileSync(join(dir, `example${i + 1}.mts`), e.source));
    const compilerOptions = { module: 'nodenext', target: 'es2022', strict: true, noEmit: true, skipLibCheck: true, types: ['node'] };
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, include: ['*.mts'] }));
    const tsc = spawnSync(join(projectRoot(), 'node_modules', '.bin', 'tsc'), ['-p', dir], { encoding: 'utf8' });
    expect(tsc.stdout + tsc.stderr).toBe('');
    expect(tsc.status).toBe(0);
  });

  it.for(examples.map((example, index) => ({ ...example, n: index + 1 })))(
    'example $n ($language, line $line) succeeds and leaves no endpoint behind, the subscription fulfilled',
    { timeout: 300_000 },
    async (example, context) => {
      skipMissing(example.language, context);
      const run = await runExample(example);
      // The Go commands' stderr holds go mod's notes on what it made; the programs' own say nothing there.
      expect(example.language === 'go' ? '' : complaints(run.stderr)).toBe('');
      expect(run.status, run.stderr).toBe(0);
      const last = run.stdout.trim().split('\n').at(-1);
      expect(last).toBe(example.webhook ? `subscription.paused ${subscriptionId}` : '0020');
      expect(await leftBehind()).toEqual({ endpoints: [], status: 'fulfilled' });
    },
  );

  it.for(examples.filter((e) => e.webhook))(
    'the $language webhook example (line $line) removes its endpoint when its pause fails',
    { timeout: 120_000 },
    async (example, context) => {
      skipMissing(example.language, context);
      const { apiKey } = await t.merchant();
      const run = await runExample(example, { API_KEY: apiKey, SUBSCRIPTION_ID: '00000000-0000-4000-8000-000000000000' });
      expect(run.status).not.toBe(0);
      expect(run.stderr).toContain('404');
      expect(await endpointsOf(apiKey)).toEqual([]);
    },
  );
});
