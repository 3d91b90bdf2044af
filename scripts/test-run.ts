/**
 * `npm test`: `npm run check`, then every test suite, then the closing lines CI reads.
 *
 * A check step that cannot run here (its tool needs Go, python3's venv or root) is skipped with one
 * line (scripts/skipped-steps.ts); the `check` line counts those steps as skipped, with one line each
 * saying how to run it, above the closing lines. Steps skipped before `npm test` started (CI's image
 * check) count too when SKIPPED_STEPS_SINCE gives the time they began (ms since the epoch). A failed
 * check stops the run there: its closing lines count it as one failure.
 *
 * Each suite runs whether or not the one before it passed, so that a failing run still ends with its
 * counts: one line per suite, then `total: N passed, N failed, N skipped` (scripts/test-summary.ts).
 * Exits non-zero when any suite failed or could not report its counts.
 *
 * A suite is a command and the report it leaves (vitest's json, a JUnit file); adding one is one
 * entry in stages(). The suites of a stage run at once where each has its own service and database
 * and none times what it checks (the machines that run CI have two cores, and each of those suites
 * leaves one partly idle); each then prints its output in one piece when it ends. Each suite's time
 * is printed in one line above the closing lines.
 *
 * After the main vitest run, the test files whose behaviour depends on an engine workaround run
 * again with DB_WORKAROUNDS switching off every workaround the embedded engine can do without, so
 * that the MongoDB side of each runs somewhere (`mongod` cannot be had on our machines): a suite of
 * its own in the closing lines. Which are switched off, and which are kept and why, is printed first.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Capabilities } from '../src/db/capabilities.js';
import { everyWorkaround, type WorkaroundName } from '../src/db/workarounds.js';
import { ensureGoTool, goToolCanBeHad, STRIPE_MOCK } from './go-tool.js';
import { projectRoot } from '../src/lib/project-root.js';
import { type FileSeconds, slowestLines } from '../test/support/slowest-files.reporter.js';
import type { UnhandledError } from '../test/support/unhandled-errors.reporter.js';
import { runCollected } from './run-quietly.js';
import { skippedSince, type SkippedStep } from './skipped-steps.js';
import { type Counts, junitCounts, summary, vitestCounts, vitestFailures, type VitestJson } from './test-summary.js';

const ARTIFACTS = join(projectRoot(), 'test-artifacts');
/** Each vitest lane's files and their times (test/support/slowest-files.reporter.ts), read by `npm run test:durations`. */
export const FILE_SECONDS_DIR = join(ARTIFACTS, 'file-seconds');

/**
 * Capabilities the embedded FerretDB lacks at a cost in speed only: their workarounds are switched
 * off in the pass without workarounds. A workaround for any other capability is kept (a new entry
 * of the table too, until shown to be speed-only here), each for the reason the table gives.
 */
const SPEED_ONLY: Partial<Record<keyof Capabilities, string>> = {
  parallelWriters: 'with one writer, parallel writes wait for it: slower, with the same results',
  secondaryIndexes: 'a query its index does not serve reads more documents, with the same answer',
};

/** Workarounds kept on although their capability is speed-only here, and why. */
const KEPT: Partial<Record<WorkaroundName, string>> = {
  statementsPerCommand: 'a bulk write of 100 statements held a connection per statement and stalled every client of the engine',
};

/**
 * The test files whose behaviour depends on a workaround switched off in that pass: bulk chunks
 * and webhook batches (oneJobAtATime), the events relay (relayPauses), requests waiting on the one
 * writer (requestPool), due schedules (scheduleClock). bulk-shared and workers (worker processes)
 * pass too but are left out: they are the two longest files of that pass (112 s and 75 s of it).
 */
const WORKAROUND_FILES = [
  'test/subscriptions/single-operations.test.ts',
  'test/bulk/bulk.test.ts',
  'test/bulk/bulk-mixed.test.ts',
  'test/events/events-webhooks.test.ts',
  'test/events/events-schedules.test.ts',
  'test/schedules/schedules.test.ts',
  'test/main/background-stop.test.ts',
  'test/db/db-faults-slow.test.ts',
];

/** The workarounds the pass switches off, and those it keeps with why (printed before it runs). */
export function workaroundsOffPass(): { readonly off: readonly WorkaroundName[]; readonly kept: readonly string[] } {
  const off: WorkaroundName[] = [];
  const kept: string[] = [];
  for (const { workaround, missing, why } of everyWorkaround()) {
    const keptWhy = KEPT[workaround] ?? (SPEED_ONLY[missing] ? undefined : `without ${missing}: ${why}`);
    if (keptWhy === undefined) off.push(workaround);
    else kept.push(`${workaround} (${keptWhy})`);
  }
  return { off, kept };
}

/**
 * Where a suite's output goes: `live` to ours as it comes; `kept` (a suite run beside another) to
 * ours in one piece when it ends, so that two suites' lines never mix.
 */
type Output = 'live' | 'kept';

interface Suite {
  label: string;
  /** Runs the suite; resolves to its exit status, or the signal that ended it. */
  run(output: Output): Promise<number | string | null>;
  /** The counts this run of the suite reported; throws when it left no report. */
  counts(since: number): Counts;
  /** One line per failed test, when the suite's report names them. */
  failures?(): string[];
}

/** The newest JUnit report in `dir` written since `since` (ms). */
export function newestJunit(dir: string, since: number): string {
  const files = readdirSync(dir, { withFileTypes: true })
    .filter((f) => f.isFile() && f.name.endsWith('.xml'))
    .map((f) => join(dir, f.name))
    .filter((path) => statSync(path).mtimeMs >= since)
    .sort((a, b) => statSync(a).mtimeMs - statSync(b).mtimeMs);
  const newest = files.at(-1);
  if (!newest) throw new Error(`no JUnit report in ${dir} from this run`);
  return newest;
}

/**
 * Runs `command` to its end, its output (after the lines `said`) as `output` says; resolves to its
 * exit status, or the signal that ended it.
 */
async function runCommand(
  command: readonly string[],
  output: Output,
  vars: Record<string, string> = {},
  said: readonly string[] = [],
): Promise<number | string | null> {
  const options = { cwd: projectRoot(), env: { ...process.env, ...vars } };
  if (output === 'kept') {
    const { status, output: text } = await runCollected(command[0]!, command.slice(1), options).catch((error: Error) => ({
      status: 1,
      output: `${command.join(' ')}: ${error.message}`,
    }));
    const whole = [...said, text].join('\n');
    process.stdout.write(whole === '' || whole.endsWith('\n') ? whole : `${whole}\n`);
    return status;
  }
  if (said.length > 0) console.log(said.join('\n'));
  return new Promise((resolve) => {
    const child = spawn(command[0]!, command.slice(1), { ...options, stdio: 'inherit' });
    child.on('error', (error) => {
      console.error(`${command.join(' ')}: ${error.message}`);
      resolve(1);
    });
    child.on('close', (code, signal) => resolve(code ?? signal));
  });
}

const vitestReport = (name: string) => JSON.parse(readFileSync(join(ARTIFACTS, name), 'utf8')) as VitestJson;

/** The counts of a report this run of the suite wrote (scripts/clients/test.ts sums its runs' JUnit reports into one). */
function freshCounts(path: string, since: number, countsOf: (report: unknown) => Counts): Counts {
  if ((statSync(path, { throwIfNoEntry: false })?.mtimeMs ?? 0) < since) throw new Error(`no ${path} from this run`);
  return countsOf(JSON.parse(readFileSync(path, 'utf8')));
}

const added = (a: Counts, b: Counts): Counts => ({
  passed: a.passed + b.passed,
  failed: a.failed + b.failed,
  skipped: a.skipped + b.skipped,
});

/**
 * The main vitest run, in lanes of vitest's projects (vitest.config.ts): `side by side` (two files
 * at once) and `waiting` (the files that mostly wait, all at once: test/support/alone.ts) as two
 * vitest processes at once, so that the waiting overlaps the others' work; then `alone`, one file
 * at a time with nothing beside it, then `busy in pairs` and `in pairs`, two at a time with nothing else beside them. Each lane leaves its json report and its files' times; the
 * suite counts every lane's tests once, then prints the ten slowest files of all lanes.
 */
export const VITEST_LANES: readonly (readonly { readonly project: string; readonly output: Output }[])[] = [
  [
    { project: 'side by side', output: 'live' },
    { project: 'waiting', output: 'kept' },
  ],
  [{ project: 'alone', output: 'live' }],
  [{ project: 'busy in pairs', output: 'live' }],
  [{ project: 'in pairs', output: 'live' }],
];

const laneName = (project: string) => project.replace(/\W+/g, '-');
const laneReport = (project: string) => `vitest-${laneName(project)}.json`;
const laneSeconds = (project: string) => join(FILE_SECONDS_DIR, `${laneName(project)}.json`);
const laneErrors = (project: string) => join(ARTIFACTS, `vitest-${laneName(project)}-unhandled.json`);
const laneProjects = () => VITEST_LANES.flat().map((lane) => lane.project);

/** Every file's time the lanes of this run wrote (since `since`, ms). */
export function laneFileSeconds(since = 0, dir = FILE_SECONDS_DIR): FileSeconds[] {
  if (!existsSync(dir)) return [];
  const files = readdirSync(dir, { withFileTypes: true })
    .filter((f) => f.isFile() && f.name.endsWith('.json'))
    .map((f) => join(dir, f.name))
    .filter((path) => statSync(path).mtimeMs >= since);
  return files.flatMap((path) => JSON.parse(readFileSync(path, 'utf8')) as FileSeconds[]);
}

/**
 * What vitest's global setup builds or fetches on a first run (stripe-mock, Kafka's jars), done
 * once before two lanes' global setups start at once: each would build its own and replace the
 * other's, which the other may be running. Where it cannot be had, the lanes say so themselves.
 */
async function prepareOnce(): Promise<void> {
  try {
    if (goToolCanBeHad(STRIPE_MOCK)) await ensureGoTool(STRIPE_MOCK);
    const { javaAndMavenFound, prepareKafka } = await import('../test/support/kafka-broker.js');
    if (await javaAndMavenFound()) await prepareKafka();
  } catch (error) {
    // The lanes' global setups try again, and fail with the same error where it is one.
    console.error(`preparing the vitest lanes: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** The main vitest run; `besideFirstLanes` (the image check) is waited for before the lanes after the first. */
const vitestSuite = (besideFirstLanes: Promise<unknown>): Suite => ({
  label: 'vitest',
  async run() {
    const started = Date.now();
    rmSync(FILE_SECONDS_DIR, { recursive: true, force: true });
    await prepareOnce();
    let status: number | string | null = 0;
    for (const [i, stage] of VITEST_LANES.entries()) {
      if (i > 0) await besideFirstLanes;
      const statuses = await Promise.all(
        stage.map(({ project, output }) =>
          runCommand(['vitest', 'run', '--project', project, `--outputFile.json=test-artifacts/${laneReport(project)}`], output, {
            FILE_SECONDS_JSON: laneSeconds(project),
            UNHANDLED_ERRORS_JSON: laneErrors(project),
          }),
        ),
      );
      status = statuses.find((s) => s !== 0) ?? status;
    }
    const slowest = slowestLines(laneFileSeconds(started));
    if (slowest.length > 0) console.log(`\n${slowest.join('\n')}`);
    return status;
  },
  counts: (since) =>
    laneProjects()
      .map((project) => freshCounts(join(ARTIFACTS, laneReport(project)), since, (report) => vitestCounts(report as VitestJson)))
      .reduce(added),
  failures: () =>
    laneProjects().flatMap((project) => [
      ...vitestFailures(vitestReport(laneReport(project)), projectRoot()),
      ...unhandledLines(laneErrors(project)),
    ]),
});

/** One line per unhandled error a lane's run left (test/support/unhandled-errors.reporter.ts). */
export function unhandledLines(path: string): string[] {
  if (!existsSync(path)) return [];
  return (JSON.parse(readFileSync(path, 'utf8')) as UnhandledError[]).map(
    ({ file, test, message }) =>
      `unhandled error${file ? ` from ${file}` : ''}${test ? ` > ${test}` : ''}: ${message.split('\n')[0]!.slice(0, 300)}`,
  );
}

const workaroundsOff: Suite = {
  label: 'vitest, workarounds off',
  run(output) {
    const { off, kept } = workaroundsOffPass();
    const said = [
      `workarounds off: ${WORKAROUND_FILES.length} test files again with DB_WORKAROUNDS=${off.join(',')} (speed only on the embedded engine)`,
      ...kept.map((k) => `workarounds off: kept on: ${k}`),
    ];
    const command = ['vitest', 'run', ...WORKAROUND_FILES, '--outputFile.json=test-artifacts/vitest-workarounds-off.json'];
    return runCommand(command, output, { DB_WORKAROUNDS: off.join(',') }, said);
  },
  counts: (since) => freshCounts(join(ARTIFACTS, 'vitest-workarounds-off.json'), since, (report) => vitestCounts(report as VitestJson)),
  failures: () => vitestFailures(vitestReport('vitest-workarounds-off.json'), projectRoot()),
};

const commandSuite = (label: string, command: readonly string[], counts: Suite['counts']): Suite => ({
  label,
  run: (output) => runCommand(command, output),
  counts,
});

const schemathesis = commandSuite('schemathesis', ['tsx', 'scripts/fuzz.ts'], (since) =>
  junitCounts(readFileSync(newestJunit(join(ARTIFACTS, 'schemathesis'), since), 'utf8')),
);
const clients = commandSuite('clients', ['tsx', 'scripts/clients/test.ts'], (since) =>
  freshCounts(join(ARTIFACTS, 'clients', 'counts.json'), since, (report) => report as Counts),
);
const arazzo = commandSuite('arazzo', ['tsx', 'scripts/arazzo.ts'], (since) =>
  freshCounts(join(ARTIFACTS, 'arazzo', 'counts.json'), since, (report) => report as Counts),
);

/**
 * The suites in stages, one stage after another; a stage's chains run at once, each chain's suites
 * one after another. Some files of the main vitest run time what they check: nothing runs beside
 * it but what `besideFirstLanes` stands for. Schemathesis on one side, and the pass without the
 * workarounds, the clients and the workflows on the other, each run a service of their own on a
 * scratch database, and what they time has room to spare: the two sides run at once (the clients'
 * packages are built while Schemathesis fuzzes), about two minutes each.
 */
export const stages = (besideFirstLanes: Promise<unknown> = Promise.resolve()): readonly (readonly (readonly Suite[])[])[] => [
  [[vitestSuite(besideFirstLanes)]],
  [[schemathesis], [workaroundsOff, clients, arazzo]],
];

/**
 * A suite that failed with no failed test (vitest's unhandled errors, a runner's own error) counts
 * one failure more, said in a line of its own: the closing line never reads 0 failed for a run
 * that failed.
 */
export function failedRunCounted(label: string, counts: Counts, exit: number | string | null): { counts: Counts; line?: string } {
  if (exit === 0 || counts.failed > 0) return { counts };
  const line = `${label}: exited ${exit} with no failed test (an unhandled error, or the runner's own): counted as one failure`;
  return { counts: { ...counts, failed: 1 }, line };
}

/** The check's line: one pass or one failure, and each step it skipped; a line per skipped step says how to run it. */
export function checkCounted(exit: number | string | null, skipped: readonly SkippedStep[]): { counts: Counts; lines: string[] } {
  return {
    counts: { passed: exit === 0 ? 1 : 0, failed: exit === 0 ? 0 : 1, skipped: skipped.length },
    lines: skipped.map((step) => `skipped: ${step.what} (${step.why}); to run it: ${step.how}`),
  };
}

/** One line with each suite's time in whole seconds, and the whole run's: no runner closes on a line of this form. */
export function timesLine(times: readonly (readonly [string, number])[], wholeMs: number): string {
  const seconds = (ms: number) => `${Math.round(ms / 1000)} s`;
  return `suite times: ${times.map(([label, ms]) => `${label} ${seconds(ms)}`).join('; ')}; npm test ${seconds(wholeMs)} in all`;
}

interface Ran {
  readonly suite: Suite;
  readonly status: number | string | null;
  readonly since: number;
  readonly ms: number;
}

async function runChain(chain: readonly Suite[], output: Output): Promise<Ran[]> {
  const ran: Ran[] = [];
  for (const suite of chain) {
    const started = Date.now();
    const status = await suite.run(output);
    ran.push({ suite, status, since: started - 1000, ms: Date.now() - started });
  }
  return ran;
}

/**
 * CHECK_IMAGE=1 (set by .ci/run): `npm run check:image` runs beside `npm run check` and the first
 * lanes of vitest, and is waited for before the `alone` lane; its output is printed whole when it
 * ends. The image's build and its containers mostly wait, and none of those files times what it
 * checks. It is not a test suite: a failure of it fails the run, said in a line above the closing
 * lines; a skip of it counts in the check's line when it skipped before the check ended.
 */
const withImage = () => process.env.CHECK_IMAGE === '1';

async function timed<T>(work: Promise<T>): Promise<[T, number]> {
  const at = Date.now();
  const result = await work;
  return [result, Date.now() - at];
}

async function main(): Promise<number> {
  const started = Date.now();
  const since = Number(process.env.SKIPPED_STEPS_SINCE) || started;
  mkdirSync(ARTIFACTS, { recursive: true });
  const image = withImage() ? timed(runCommand(['npm', 'run', 'check:image'], 'kept')) : undefined;
  const [check, checkMs] = await timed(runCommand(['npm', 'run', 'check'], 'live'));
  const checked = checkCounted(check, skippedSince(since));
  const parts: [string, Counts][] = [['check', checked.counts]];
  const times: [string, number][] = [['check', checkMs]];
  const failures: string[] = [...checked.lines];
  const imageFailed = async () => {
    if (!image) return false;
    const [status, ms] = await image;
    times.splice(1, 0, ['check:image', ms]);
    if (status !== 0) failures.push(`image: npm run check:image exited ${status}: the run fails`);
    return status !== 0;
  };
  if (checked.counts.failed > 0) {
    await imageFailed();
    console.log([`check: npm run check exited ${check}: no test ran`, ...failures, ...summary(parts)].join('\n'));
    return 1;
  }
  let failed = false;
  for (const stage of stages(image)) {
    const output: Output = stage.length > 1 ? 'kept' : 'live';
    const ran = (await Promise.all(stage.map((chain) => runChain(chain, output)))).flat();
    // In the order the stage lists them, whichever ended first.
    for (const { suite, status, since: suiteSince, ms } of ran) {
      times.push([suite.label, ms]);
      if (status !== 0) failed = true;
      try {
        const { counts, line } = failedRunCounted(suite.label, suite.counts(suiteSince), status);
        parts.push([suite.label, counts]);
        if (line) failures.push(line);
        if (counts.failed > 0) failures.push(...(suite.failures?.() ?? []).map((failure) => `${suite.label} ${failure}`));
      } catch (error) {
        // A suite that crashed before reporting counts as one failure, said in a line of its own.
        console.error(`${suite.label}: no counts (${error instanceof Error ? error.message : String(error)}); exit ${status}`);
        parts.push([suite.label, { passed: 0, failed: 1, skipped: 0 }]);
        failed = true;
      }
    }
  }
  if (await imageFailed()) failed = true;
  console.log([timesLine(times, Date.now() - started), ...failures, ...summary(parts)].join('\n'));
  return failed || parts.some(([, c]) => c.failed > 0) ? 1 : 0;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) process.exitCode = await main();
