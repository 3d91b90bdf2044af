/** A logger whose JSON lines are kept, as a process's stdout would show them: what tests read a service's or a component's log from. */
import { Writable } from 'node:stream';
import { createLogger } from '../../src/logger.js';

export function collectedLog(): { lines: Record<string, unknown>[]; log: ReturnType<typeof createLogger> } {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { lines, log: createLogger('debug', sink) };
}
