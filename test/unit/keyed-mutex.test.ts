/** The per-subscription queue (src/lib/keyed-mutex.ts): tasks on one key run one at a time, in order; other keys do not wait. */
import { describe, expect, it } from 'vitest';
import { KeyedMutex, UNQUEUED } from '../../src/lib/keyed-mutex.js';

/** A task that records its start and end, and ends when `release` is called. */
function task(log: string[], name: string) {
  let release!: () => void;
  const ended = new Promise<void>((resolve) => (release = resolve));
  return {
    run: async () => {
      log.push(`${name} start`);
      await ended;
      log.push(`${name} end`);
      return name;
    },
    release: () => release(),
  };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('KeyedMutex', () => {
  it('runs tasks on one key one after another, in the order they came', async () => {
    const mutex = new KeyedMutex();
    const log: string[] = [];
    const [a, b] = [task(log, 'a'), task(log, 'b')];
    const results = [mutex.run('k', a.run), mutex.run('k', b.run)];
    await settle();
    expect(log).toEqual(['a start']);
    a.release();
    await settle();
    expect(log).toEqual(['a start', 'a end', 'b start']);
    b.release();
    expect(await Promise.all(results)).toEqual(['a', 'b']);
  });

  it('lets tasks on other keys run meanwhile', async () => {
    const mutex = new KeyedMutex();
    const log: string[] = [];
    const [a, b] = [task(log, 'a'), task(log, 'b')];
    const results = [mutex.run('k1', a.run), mutex.run('k2', b.run)];
    await settle();
    expect(log).toEqual(['a start', 'b start']);
    b.release();
    a.release();
    expect(await Promise.all(results)).toEqual(['a', 'b']);
  });

  it('a task that fails does not stop the next one on its key, and its caller gets the error', async () => {
    const mutex = new KeyedMutex();
    const failed = mutex.run('k', () => Promise.reject(new Error('boom')));
    const next = mutex.run('k', () => Promise.resolve('next'));
    await expect(failed).rejects.toThrow('boom');
    expect(await next).toBe('next');
  });

  it('runAll holds every key: two tasks with overlapping keys in opposite orders both finish (no deadlock), one after the other', async () => {
    const mutex = new KeyedMutex();
    const log: string[] = [];
    const [a, b] = [task(log, 'a'), task(log, 'b')];
    const results = [mutex.runAll(['x', 'y'], a.run), mutex.runAll(['y', 'x'], b.run)];
    await settle();
    expect(log).toEqual(['a start']);
    a.release();
    b.release();
    expect(await Promise.all(results)).toEqual(['a', 'b']);
    expect(log).toEqual(['a start', 'a end', 'b start', 'b end']);
  });

  it('runAll waits for a single task on any of its keys', async () => {
    const mutex = new KeyedMutex();
    const log: string[] = [];
    const [a, b] = [task(log, 'a'), task(log, 'b')];
    const results = [mutex.run('y', a.run), mutex.runAll(['x', 'y', 'z'], b.run)];
    await settle();
    expect(log).toEqual(['a start']);
    a.release();
    b.release();
    expect(await Promise.all(results)).toEqual(['a', 'b']);
  });

  it('UNQUEUED (a server whose conditional update is atomic) runs tasks on one key at once', async () => {
    const log: string[] = [];
    const [a, b] = [task(log, 'a'), task(log, 'b')];
    const results = [UNQUEUED.run('k', a.run), UNQUEUED.runAll(['k'], b.run)];
    await settle();
    expect(log).toEqual(['a start', 'b start']);
    a.release();
    b.release();
    expect(await Promise.all(results)).toEqual(['a', 'b']);
  });
});
