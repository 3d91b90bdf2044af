/**
 * `npm run check`: every static check, in two lanes that run at once, each step of a lane after the
 * one before it. The steps are single-threaded programs (ESLint's type-aware run, tsc, the Java
 * client generator) and the machines that run CI have two cores: one after another they left one
 * core idle. The lanes are balanced by the steps' times; `typecheck` then `build` stay in one lane,
 * the order `npm test` needs (the tests of real processes run dist/).
 *
 * A step's output is printed in one piece when it ends, so that the two lanes' lines never mix. A
 * failed step stops its lane; the other lane runs to its end, and the check exits 1 naming each
 * failed step. A step that cannot run here skips itself with one line (scripts/skipped-steps.ts).
 */
import { spawn } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { projectRoot } from '../src/lib/project-root.js';

export interface Step {
  readonly name: string;
  readonly command: readonly string[];
}

const npm = (script: string): Step => ({ name: script, command: ['npm', 'run', '--silent', script] });

/**
 * The two lanes: ESLint, the compilers and the deploy files' lint (whose promtool is built on the
 * first run) in one, the client generator and the text checks in the other.
 */
export const LANES: readonly (readonly Step[])[] = [
  [npm('lint'), npm('typecheck'), npm('build'), npm('check:deploy')],
  [
    npm('check:generated'),
    { name: 'prettier', command: ['prettier', '--check', '.'] },
    npm('lint:spec'),
    npm('check:breaking'),
    npm('check:request-fields'),
    npm('check:asyncapi'),
    npm('check:links'),
  ],
];

interface Ran {
  readonly step: Step;
  readonly status: number;
}

function run(step: Step): Promise<Ran> {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(step.command[0]!, step.command.slice(1), { cwd: projectRoot(), stdio: ['ignore', 'pipe', 'pipe'] });
    const output: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => output.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => output.push(chunk));
    const done = (status: number) => {
      const text = Buffer.concat(output).toString().trimEnd();
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      process.stderr.write(`${status === 0 ? 'ok' : 'FAILED'} ${step.name} (${seconds} s)\n${text ? `${text}\n` : ''}`);
      resolve({ step, status });
    };
    child.on('error', (error) => {
      output.push(Buffer.from(error.message));
      done(1);
    });
    child.on('close', (code, signal) => done(code ?? (signal ? 1 : 0)));
  });
}

async function lane(steps: readonly Step[]): Promise<Ran[]> {
  const ran: Ran[] = [];
  for (const step of steps) {
    const result = await run(step);
    ran.push(result);
    if (result.status !== 0) break;
  }
  return ran;
}

export async function check(lanes: readonly (readonly Step[])[] = LANES): Promise<number> {
  const failed = (await Promise.all(lanes.map(lane))).flat().filter((r) => r.status !== 0);
  if (failed.length > 0) console.error(`check failed: ${failed.map((r) => r.step.name).join(', ')}`);
  return failed.length > 0 ? 1 : 0;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) process.exitCode = await check();
