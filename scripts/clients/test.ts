/**
 * The clients as a merchant uses them (npm test's `clients` suite; alone: tsx scripts/clients/test.ts):
 * both packages built afresh from clients/ (scripts/clients/build.ts), then
 *   TypeScript: the tarball and standardwebhooks npm-installed into a scratch project, its scenarios
 *               (clients/scenarios/typescript) type-checked against the package's .d.ts, then run by
 *               `node --test`;
 *   Python:     the wheel pip-installed into a scratch virtual environment with pytest and
 *               standardwebhooks (pinned: scripts/clients/scenario-requirements.txt), its scenarios
 *               (clients/scenarios/python) run by pytest,
 *   Go:         clients/go required by a scratch module, built and vetted, its scenarios
 *               (clients/scenarios/go) run by `go test` (scripts/clients/go.ts; skipped, with the
 *               reason printed, where the machine has no Go),
 *   Java:       the jar Maven builds from clients/java installed from clients/dist/ into .cache/m2, a
 *               scratch Maven project's scenarios (clients/scenarios/java) run by JUnit 5
 *               (scripts/clients/java.ts; skipped, with the reason printed, without Java or Maven),
 * each language's client-layer scenarios beside its merchant scenarios (layer.test.ts, test_layer.py,
 * layer_test.go, LayerTest.java), each against the Prism mock and against the service (a scratch database, workers on), both behind
 * a proxy that checks every answer against the spec (test/support/contract-proxy.ts).
 *
 * `--language <typescript|python|go|java>` runs that language's scenarios alone (a change to one client).
 *
 * pytest's console goes to test-artifacts/clients/, never to our output: it closes on a line like
 * `=== 9 passed in 3.1s ===`, which CI reads as the runner's closing line. Its counts, and node's,
 * come from their JUnit reports and are printed in our words; the total goes to
 * test-artifacts/clients/counts.json for scripts/test-run.ts. Exits 1 when anything failed.
 */
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import { randomUUID } from 'node:crypto';
import { loadConfig } from '../../src/config.js';
import { projectRoot } from '../../src/lib/project-root.js';
import { SPEC_PATH } from '../../src/lib/spec.js';
import { createLogger } from '../../src/logger.js';
import type { SubscriptionStatus } from '../../src/subscriptions/subscriptions.rules.js';
import { startContractProxy, type ContractProxy } from '../../test/support/contract-proxy.js';
import { startPrism } from '../../test/support/prism.js';
import { withoutClosingFences } from '../fuzz.js';
import { runCollected, runQuietly } from '../run-quietly.js';
import { type LoopbackService, openScratchDatabase, serveOnLoopback } from '../support.js';
import { type Counts, countsLine, junitCaseCounts, summary } from '../test-summary.js';
import { buildPackages, describeBuilt, DIST } from './build.js';
import { specVersion as specVersionOf } from './generate.js';
import { createVenv, pipInstall } from '../python-venv.js';
import { goMissing, goProject, runGoScenarios } from './go.js';
import { javaMissing, javaProject, runJavaScenarios } from './java.js';

const ROOT = projectRoot();
const SCENARIOS = join(ROOT, 'clients', 'scenarios');
export const ARTIFACTS = join(ROOT, 'test-artifacts', 'clients');
const bin = (name: string) => join(ROOT, 'node_modules', '.bin', name);

interface Target {
  readonly name: string;
  readonly label: string;
  readonly proxy: ContractProxy;
  /** A fresh merchant's key and subscriptions for each run (the mock takes any key and any id). */
  account(): Promise<Account>;
  readonly stateful: boolean;
}

interface Account {
  readonly apiKey: string;
  readonly testApiKey: string;
  readonly ids: Record<SubscriptionStatus, string[]>;
  /** The same merchant's subscriptions for the client layer's scenarios (clients/scenarios/<language>/layer*), apart from the others'. */
  readonly layerIds: Record<'fulfilled' | 'cancelled', string[]>;
  /** Another merchant's key, with LIST_COUNT subscriptions and nothing else; listCount null on the mock (its lists are examples). */
  readonly listApiKey: string;
  readonly listCount: number | null;
}

/** Subscriptions a layer scenario lists: more than two pages of 100. */
const LIST_COUNT = 250;

interface Language {
  readonly name: string;
  /** Runs the scenarios against the target described in targetFile; leaves a JUnit report at report. */
  run(targetFile: string, report: string, label: string): Promise<void>;
}

/** A child process to its end; its output to `out` (a file) or to ours. */
/** Runs a scenario runner, its whole console written to `out`; its exit status. */
async function finished(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv; out: string }): Promise<number> {
  const { status, output } = await runCollected(command, args, options);
  writeFileSync(options.out, output);
  return status;
}

/** The merchant's scenarios, then the client layer's (clients/scenarios/typescript). */
const TYPESCRIPT_SCENARIOS = ['scenarios.test.ts', 'layer.test.ts'];

/** A scratch project with the tarball installed as a merchant would, its scenarios type-checked against the package's .d.ts. */
function typescriptProject(tarball: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'subsvc-merchant-ts-'));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'merchant-scenarios', private: true, type: 'module' }));
  runQuietly('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', tarball, 'standardwebhooks@1.1.1'], { cwd: dir });
  for (const file of TYPESCRIPT_SCENARIOS) cpSync(join(SCENARIOS, 'typescript', file), join(dir, file));
  const compilerOptions = {
    target: 'ES2022',
    module: 'NodeNext',
    strict: true,
    noEmit: true,
    erasableSyntaxOnly: true,
    types: ['node'],
    typeRoots: [join(ROOT, 'node_modules', '@types')],
  };
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: TYPESCRIPT_SCENARIOS }));
  runQuietly(bin('tsc'), ['-p', dir]);
  return dir;
}

const typescript = (project: string): Language => ({
  name: 'TypeScript (@subsvc/client tarball)',
  async run(targetFile, report, label) {
    const out = join(ARTIFACTS, `${label}.txt`);
    const args = [
      '--test',
      '--test-reporter=spec',
      '--test-reporter-destination=stdout',
      '--test-reporter=junit',
      `--test-reporter-destination=${report}`,
      ...TYPESCRIPT_SCENARIOS,
    ];
    await finished(process.execPath, args, { cwd: project, env: { ...process.env, SUBSVC_TARGET: targetFile }, out });
    // Its test lines and failures are shown; its closing summary (`ℹ tests 11`, `ℹ pass 11`, …, read by CI as node's test runner's last lines) is not.
    console.log(withoutNodeSummary(readFileSync(out, 'utf8')));
    console.log(`node --test's full console: ${relative(ROOT, out)}`);
  },
});

/** node --test's spec output without its closing summary lines (`ℹ tests N`, `ℹ pass N`, `ℹ duration_ms …`). */
export function withoutNodeSummary(text: string): string {
  return text
    .split('\n')
    .filter((line) => !/^\s*ℹ /.test(line))
    .join('\n');
}

/** The merchant's scenarios, then the client layer's (clients/scenarios/python). */
const PYTHON_SCENARIOS = ['test_scenarios.py', 'test_layer.py'];

/** A scratch virtual environment with the wheel pip-installed as a merchant would, and pytest. */
function pythonEnvironment(wheel: string): { dir: string; python: string } {
  const dir = mkdtempSync(join(tmpdir(), 'subsvc-merchant-py-'));
  createVenv(join(dir, 'venv'), "the Python client's scenarios");
  pipInstall(join(dir, 'venv'), ['-c', join(ROOT, 'scripts', 'clients', 'scenario-requirements.txt'), wheel, 'pytest', 'standardwebhooks']);
  for (const file of PYTHON_SCENARIOS) cpSync(join(SCENARIOS, 'python', file), join(dir, file));
  return { dir, python: join(dir, 'venv', 'bin', 'python') };
}

const python = ({ dir, python: interpreter }: { dir: string; python: string }): Language => ({
  name: 'Python (subsvc-client wheel)',
  async run(targetFile, report, label) {
    const out = join(ARTIFACTS, `${label}.txt`);
    const args = ['-m', 'pytest', ...PYTHON_SCENARIOS, '-p', 'no:cacheprovider', '-rs', '-v', `--junitxml=${report}`];
    const status = await finished(interpreter, args, {
      cwd: dir,
      env: { ...process.env, SUBSVC_TARGET: targetFile, PYTHONDONTWRITEBYTECODE: '1' },
      out,
    });
    const text = readFileSync(out, 'utf8');
    // Its test lines are shown; its closing fence (read by CI as a runner's last line) is rewritten.
    console.log(
      withoutClosingFences(
        status === 0
          ? text
              .split('\n')
              .filter((l) => /(PASSED|FAILED|SKIPPED|ERROR)/.test(l))
              .join('\n')
          : text,
      ),
    );
    console.log(`pytest's full console: ${relative(ROOT, out)}`);
  },
});

const go = (module: string): Language => ({
  name: 'Go (clients/go module)',
  run: (targetFile, report, label) => runGoScenarios(module, targetFile, report, join(ARTIFACTS, `${label}.json`)),
});

const java = (project: string): Language => ({
  name: 'Java (subsvc-client jar)',
  run: (targetFile, report, label) => runJavaScenarios(project, targetFile, report, join(ARTIFACTS, `${label}.txt`)),
});

async function serviceTarget(): Promise<{ target: Target; stop(): Promise<void> }> {
  const config = loadConfig();
  const log = createLogger(process.env.LOG_LEVEL === undefined ? 'warn' : config.logLevel);
  const scratch = await openScratchDatabase(config, 'clients', log);
  // Polling faster than the default, so that a bulk request completes within the scenario's wait; loopback webhooks allowed.
  let running: LoopbackService | undefined;
  try {
    running = await serveOnLoopback(
      scratch,
      { ...config, bulkPollIntervalMs: 100, schedulePollMs: 200, webhooksAllowPrivateUrls: true },
      log,
    );
  } catch (error) {
    await scratch.close();
    throw error;
  }
  const { service, baseUrl } = running;
  const proxy = await startContractProxy(baseUrl);
  const seed = async (merchantId: string, count: number, status: SubscriptionStatus) =>
    (await service.seeder.seed({ merchantId, count, status })).map((s) => s.id);
  return {
    target: {
      name: `the service (${scratch.engine} ${scratch.version})`,
      label: 'service',
      proxy,
      stateful: true,
      async account() {
        const { merchantId, apiKey, testApiKey } = await service.auth.createMerchant(`merchant ${randomUUID().slice(0, 8)}`);
        const lister = await service.auth.createMerchant(`merchant ${randomUUID().slice(0, 8)}`);
        await seed(lister.merchantId, LIST_COUNT, 'fulfilled');
        return {
          apiKey,
          testApiKey,
          ids: {
            fulfilled: await seed(merchantId, 12, 'fulfilled'),
            paused: await seed(merchantId, 4, 'paused'),
            cancelled: await seed(merchantId, 2, 'cancelled'),
          },
          layerIds: { fulfilled: await seed(merchantId, 2, 'fulfilled'), cancelled: await seed(merchantId, 2, 'cancelled') },
          listApiKey: lister.apiKey,
          listCount: LIST_COUNT,
        };
      },
    },
    async stop() {
      await proxy.stop();
      await running.stop();
      await scratch.close();
    },
  };
}

async function mockTarget(): Promise<{ target: Target; stop(): Promise<void> }> {
  const prism = await startPrism();
  const proxy = await startContractProxy(prism.baseUrl);
  const any = (n: number) => Array.from({ length: n }, () => randomUUID());
  return {
    target: {
      name: 'the Prism mock',
      label: 'mock',
      proxy,
      stateful: false,
      account: async () => ({
        apiKey: 'sk_any-key-the-mock-accepts',
        testApiKey: 'sk_test_any-key-the-mock-accepts',
        ids: { fulfilled: any(12), paused: any(4), cancelled: any(2) },
        layerIds: { fulfilled: any(2), cancelled: any(2) },
        listApiKey: 'sk_any-key-the-mock-accepts',
        listCount: null,
      }),
    },
    async stop() {
      await proxy.stop();
      await prism.stop();
    },
  };
}

const LANGUAGES = ['typescript', 'python', 'go', 'java'] as const;

/** The languages to run: all, or the one `--language` names. */
function chosenLanguages(): ReadonlySet<string> {
  const { language } = parseArgs({ options: { language: { type: 'string' } } }).values;
  if (language === undefined) return new Set(LANGUAGES);
  if (!(LANGUAGES as readonly string[]).includes(language)) throw new Error(`--language must be one of ${LANGUAGES.join(', ')}`);
  return new Set([language]);
}

async function main(): Promise<number> {
  const chosen = chosenLanguages();
  rmSync(ARTIFACTS, { recursive: true, force: true });
  mkdirSync(ARTIFACTS, { recursive: true });
  const specVersion = specVersionOf(SPEC_PATH);
  const built = buildPackages();
  for (const line of describeBuilt(built)) console.log(line);
  const scratchDirs: string[] = [];
  const started = await Promise.all([mockTarget(), serviceTarget()]);
  const parts: [string, Counts][] = [];
  try {
    const languages: [string, Language][] = [];
    if (chosen.has('typescript')) {
      const project = typescriptProject(built.tarball);
      scratchDirs.push(project);
      languages.push(['typescript', typescript(project)]);
    }
    if (chosen.has('python')) {
      const environment = pythonEnvironment(built.wheel);
      scratchDirs.push(environment.dir);
      languages.push(['python', python(environment)]);
    }
    const noGo = chosen.has('go') ? goMissing() : undefined;
    if (!chosen.has('go')) {
      console.log('\nGo client: not run (--language)');
    } else if (noGo) {
      console.log(`\nGo client: skipped, ${noGo}`);
      parts.push(['Go client (not run)', { passed: 0, failed: 0, skipped: 1 }]);
    } else {
      const module = goProject();
      scratchDirs.push(module);
      languages.push(['go', go(module)]);
    }
    const noJava = chosen.has('java') ? javaMissing() : undefined;
    if (!chosen.has('java')) {
      console.log('\nJava client: not run (--language)');
    } else if (noJava) {
      console.log(`\nJava client: skipped, ${noJava}`);
      parts.push(['Java client (not run)', { passed: 0, failed: 0, skipped: 1 }]);
    } else {
      const project = await javaProject(specVersion, DIST);
      scratchDirs.push(project);
      languages.push(['java', java(project)]);
    }
    for (const [tag, language] of languages) {
      for (const { target } of started) {
        const label = `${tag}-${target.label}`;
        const targetFile = join(ARTIFACTS, `${label}.target.json`);
        writeFileSync(
          targetFile,
          JSON.stringify({
            name: target.name,
            baseUrl: target.proxy.baseUrl,
            stateful: target.stateful,
            specVersion,
            ...(await target.account()),
          }),
        );
        console.log(`\n${language.name} against ${target.name}, through the contract-checking proxy`);
        const report = join(ARTIFACTS, `${label}.xml`);
        await language.run(targetFile, report, label);
        parts.push([`${language.name} against ${target.name}`, readJunit(report)]);
      }
    }
  } finally {
    await Promise.all(started.map((s) => s.stop()));
    for (const dir of scratchDirs) rmSync(dir, { recursive: true, force: true });
  }
  const violations = started.flatMap(({ target }) => target.proxy.violations.map((v) => `${target.name}: ${v}`));
  for (const v of violations) console.log(`contract violation: ${v}`);
  const lines = summary(parts);
  const total = parts.reduce(
    (sum, [, c]) => ({ passed: sum.passed + c.passed, failed: sum.failed + c.failed, skipped: sum.skipped + c.skipped }),
    { passed: 0, failed: violations.length, skipped: 0 },
  );
  console.log(`\n${lines.slice(0, -1).join('\n')}\n${countsLine("all the clients' runs", total)}`);
  writeFileSync(join(ARTIFACTS, 'counts.json'), JSON.stringify(total));
  return total.failed > 0 ? 1 : 0;
}

function readJunit(report: string): Counts {
  try {
    return junitCaseCounts(readFileSync(report, 'utf8'));
  } catch (error) {
    console.log(`no JUnit report at ${relative(ROOT, report)} (${(error as Error).message}): counted as one failure`);
    return { passed: 0, failed: 1, skipped: 0 };
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
