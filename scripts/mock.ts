/** `npm run mock`: Prism on the mock's view of the spec (scripts/mock-spec.ts), on MOCK_PORT (4010). */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { projectRoot } from '../src/lib/project-root.js';
import { exampleList, writeMockSpec } from './mock-spec.js';

console.error(`Prefer: example=NAME (with Prefer: code=STATUS) picks one of these examples:\n  ${exampleList().join('\n  ')}`);
const prism = spawn(
  join(projectRoot(), 'node_modules', '.bin', 'prism'),
  ['mock', writeMockSpec(), '-h', process.env.MOCK_HOST ?? '127.0.0.1', '-p', process.env.MOCK_PORT ?? '4010', ...process.argv.slice(2)],
  { stdio: 'inherit' },
);
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => prism.kill(signal));
prism.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
