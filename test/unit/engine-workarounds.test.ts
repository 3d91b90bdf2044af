/**
 * The engine workarounds are decided once, from the capabilities (src/db/workarounds.ts), and the
 * composition root builds only those (src/main/composition.ts). Only FerretDB runs here, so the MongoDB
 * path is checked as decisions: with every capability, none is built; each missing capability turns
 * on exactly its own. No database, fake or real, is needed for a decision.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { engineFor } from '../../src/main/composition.js';
import type { Capabilities } from '../../src/db/capabilities.js';
import { ConfigError } from '../../src/config.errors.js';
import { loadConfig } from '../../src/config.js';
import {
  describeWorkarounds,
  DOCUMENTS_PER_DELETE,
  everyWorkaround,
  ONE_WRITER_REQUEST_POOL,
  STATEMENTS_PER_COMMAND,
  switchOff,
  workaroundsFor,
} from '../../src/db/workarounds.js';
import { KeyedMutex, UNQUEUED } from '../../src/lib/keyed-mutex.js';

const MONGODB: Capabilities = {
  ttlIndexes: true,
  atomicConditionalUpdate: true,
  parallelWriters: true,
  secondaryIndexes: true,
  updateProjection: true,
  largeStatements: true,
};
const FERRETDB: Capabilities = {
  ttlIndexes: false,
  atomicConditionalUpdate: false,
  parallelWriters: false,
  secondaryIndexes: false,
  updateProjection: false,
  largeStatements: false,
};

describe('engine workarounds', () => {
  it('with every capability (MongoDB), none is built: no mutex, no parts, no clock, no relay pauses, no small pool, no sweeper', () => {
    const engine = engineFor(MONGODB);
    expect(engine.workarounds).toEqual({
      keyedMutex: false,
      statementsPerCommand: undefined,
      oneJobAtATime: false,
      relayPauses: false,
      requestPool: undefined,
      scheduleClock: false,
      expirySweeps: false,
      wholeDocumentAnswers: false,
      documentsPerDelete: undefined,
    });
    expect(engine.mutex).toBe(UNQUEUED);
    expect(engine.relayPauses).toBe(false);
    expect(engine.concurrency(4)).toBe(4);
    expect(describeWorkarounds(engine.workarounds)).toEqual([]);
  });

  it('without any (FerretDB v1), every one is built, each with the capability that turned it on and why', () => {
    const engine = engineFor(FERRETDB);
    expect(engine.workarounds).toEqual({
      keyedMutex: true,
      statementsPerCommand: STATEMENTS_PER_COMMAND,
      oneJobAtATime: true,
      relayPauses: true,
      requestPool: ONE_WRITER_REQUEST_POOL,
      scheduleClock: true,
      expirySweeps: true,
      wholeDocumentAnswers: true,
      documentsPerDelete: DOCUMENTS_PER_DELETE,
    });
    expect(engine.mutex).toBeInstanceOf(KeyedMutex);
    expect(engine.concurrency(4)).toBe(1);
    expect(engine.concurrency(0)).toBe(0);
    const described = describeWorkarounds(engine.workarounds);
    expect(described.map((w) => w.workaround)).toEqual(Object.keys(engine.workarounds));
    for (const w of described) expect(w.why.length).toBeGreaterThan(20);
  });

  it.each([
    ['atomicConditionalUpdate', ['keyedMutex']],
    ['parallelWriters', ['statementsPerCommand', 'oneJobAtATime', 'relayPauses', 'requestPool']],
    ['secondaryIndexes', ['scheduleClock']],
    ['ttlIndexes', ['expirySweeps']],
    ['updateProjection', ['wholeDocumentAnswers']],
    ['largeStatements', ['documentsPerDelete']],
  ] as const)('without %s alone, exactly %j are on, each naming it', (missing, expected) => {
    const on = describeWorkarounds(workaroundsFor({ ...MONGODB, [missing]: false }));
    expect(on.map((w) => w.workaround)).toEqual(expected);
    expect(new Set(on.map((w) => w.missing))).toEqual(new Set([missing]));
  });
});

describe('DB_WORKAROUNDS', () => {
  const setting = (value: string) => loadConfig({ DB_WORKAROUNDS: value }).dbWorkarounds;

  it('auto (the default) keeps what the capabilities call for', () => {
    expect(loadConfig({}).dbWorkarounds).toBe('auto');
    expect(switchOff(workaroundsFor(FERRETDB), setting('auto'))).toEqual(workaroundsFor(FERRETDB));
  });

  it('off gives a server without capabilities what MongoDB gets: every workaround of the table, new ones too', () => {
    const engine = engineFor(FERRETDB, setting('off'));
    expect(engine.workarounds).toEqual(workaroundsFor(MONGODB));
    expect(describeWorkarounds(engine.workarounds)).toEqual([]);
    expect(engine.mutex).toBe(UNQUEUED);
    expect(engine.concurrency(4)).toBe(4);
  });

  it('a list switches off exactly the workarounds it names', () => {
    const engine = engineFor(FERRETDB, setting('relayPauses, scheduleClock,requestPool'));
    const on = describeWorkarounds(engine.workarounds).map((w) => w.workaround);
    expect(on).toEqual(
      everyWorkaround()
        .map((w) => w.workaround)
        .filter((name) => !['relayPauses', 'scheduleClock', 'requestPool'].includes(name)),
    );
    expect(engine.relayPauses).toBe(false);
    expect(engine.mutex).toBeInstanceOf(KeyedMutex);
  });

  it('a value that is not a list of names, or a name the table does not hold, fails naming the variable', () => {
    expect(() => setting('relayPauses;requestPool')).toThrow(ConfigError);
    expect(() => setting('relayPauses,')).toThrow(/DB_WORKAROUNDS/);
    expect(() => engineFor(FERRETDB, setting('relayPause'))).toThrow(ConfigError);
    expect(() => engineFor(FERRETDB, setting('relayPause'))).toThrow(/DB_WORKAROUNDS names no workaround: relayPause/);
  });
});

describe('engine knowledge in one place', () => {
  const SRC = resolve(import.meta.dirname, '../../src');
  /** Where an engine may be named: the capability table and the engine's code, and what builds and configures them. */
  const MAY_NAME_THE_ENGINE = [/^db\//, /^main\//, /^config\.ts$/];
  const sources = readdirSync(SRC, { recursive: true, encoding: 'utf8' })
    .map((file) => file.split('\\').join('/'))
    .filter((file) => file.endsWith('.ts'));
  const namingFerretDb = (files: readonly string[]) => files.filter((file) => /ferretdb/i.test(readFileSync(join(SRC, file), 'utf8')));
  const among = (patterns: readonly RegExp[]) => (file: string) => patterns.some((pattern) => pattern.test(file));

  it('only src/db/, src/main/ and src/config.ts name FerretDB: other files say what they do, by capability or workaround', () => {
    const checked = sources.filter((file) => !among(MAY_NAME_THE_ENGINE)(file));
    expect(checked.length).toBeGreaterThan(50);
    expect(namingFerretDb(checked)).toEqual([]);
  });

  it('finds the name where it is (the check itself can fail)', () => {
    expect(namingFerretDb(sources)).toEqual(expect.arrayContaining(['db/workarounds.ts', 'db/ferretdb.ts']));
  });

  /** Each bulkWriteInParts call's arguments, read to its closing parenthesis. */
  const bulkWriteCalls = (text: string) =>
    [...text.matchAll(/bulkWriteInParts\(/g)].map(({ index }) => {
      let depth = 0;
      let commas = 0;
      for (let i = index + 'bulkWriteInParts'.length; i < text.length; i++) {
        const c = text[i];
        if (c === '(' || c === '[' || c === '{') depth++;
        else if (c === ')' || c === ']' || c === '}') {
          depth--;
          if (depth === 0) return commas + 1;
        } else if (c === ',' && depth === 1 && text.slice(i + 1).trimStart()[0] !== ')') commas++;
      }
      return 0;
    });

  it('every bulk write outside src/db/ passes the engine its statements per command', () => {
    // The last-used flush once sent 112 statements in one command, and the embedded engine stalled every client.
    const calls = sources
      .filter((file) => !file.startsWith('db/'))
      .flatMap((file) => bulkWriteCalls(readFileSync(join(SRC, file), 'utf8')).map((args) => ({ file, args })));
    // Fewer since the grouped writes of the write path share one call (src/subscriptions/grouped-write.ts).
    expect(calls.length).toBeGreaterThan(5);
    expect(calls.map(({ file }) => file)).toContain(join('subscriptions', 'grouped-write.ts'));
    expect(calls.filter(({ args }) => args < 3)).toEqual([]);
    expect(bulkWriteCalls('bulkWriteInParts(this.collection, writes)')).toEqual([2]);
  });
});
