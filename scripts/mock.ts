/**
 * `npm run mock`: Prism on the mock's view of the spec (scripts/mock-spec.ts), on MOCK_PORT (4010).
 * `--spec FILE` serves another copy of the spec; other arguments go to `prism mock`.
 *
 * The spec's folder is watched: an edit is derived again and Prism, which watches the derived
 * file, restarts on the new contract. An edit that does not parse leaves the old one served.
 */
import { spawn } from 'node:child_process';
import { watch } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { projectRoot } from '../src/lib/project-root.js';
import { SPEC_PATH } from '../src/lib/spec.js';
import { exampleList, writeMockSpec } from './mock-spec.js';

const args = process.argv.slice(2);
const specFlag = args.indexOf('--spec');
const source = specFlag >= 0 ? resolve(args.splice(specFlag, 2)[1]!) : SPEC_PATH;

console.error(`Prefer: example=NAME (with Prefer: code=STATUS) picks one of these examples:\n  ${exampleList().join('\n  ')}`);
const prism = spawn(
  join(projectRoot(), 'node_modules', '.bin', 'prism'),
  ['mock', writeMockSpec(source), '-h', process.env.MOCK_HOST ?? '127.0.0.1', '-p', process.env.MOCK_PORT ?? '4010', ...args],
  { stdio: 'inherit' },
);

let pending: NodeJS.Timeout | undefined;
const watcher = watch(dirname(source), { recursive: true }, () => {
  clearTimeout(pending);
  // Editors write a file in several steps; derive once they are done.
  pending = setTimeout(() => {
    try {
      writeMockSpec(source);
      console.error(`mock: ${source} changed; Prism reloads it`);
    } catch (error) {
      console.error(`mock: ${source} not reloaded, the old contract is still served: ${(error as Error).message.split('\n')[0]}`);
    }
  }, 300);
});

for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => prism.kill(signal));
prism.on('exit', (code, signal) => {
  watcher.close();
  process.exit(code ?? (signal ? 1 : 0));
});
