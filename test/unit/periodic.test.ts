/** Periodic background work (src/lib/periodic.ts): one round at a time, jittered waits, and a stop that waits for the round under way. */
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { Periodic } from '../../src/lib/periodic.js';

/** A round that runs until the test ends it, and says when it started. */
function controlledRound() {
  let started!: () => void;
  let end!: () => void;
  const round = {
    starts: 0,
    started: new Promise<void>((resolve) => (started = resolve)),
    end: () => end(),
    work: () => {
      round.starts++;
      started();
      return new Promise<void>((resolve) => (end = resolve));
    },
  };
  return round;
}

describe('Periodic', () => {
  it('stop waits for the round under way, and no round starts after it', async () => {
    const round = controlledRound();
    const periodic = new Periodic(round.work, { everyMs: 10, failed: () => undefined });
    periodic.start();
    await round.started;
    let stopped = false;
    const stopping = periodic.stop().then(() => (stopped = true));
    await sleep(50);
    expect(stopped).toBe(false);
    round.end();
    await stopping;
    await sleep(50);
    expect(round.starts).toBe(1);
    expect(periodic.running).toBe(false);
  });

  it('never runs two rounds at once: the next waits until the last has ended', async () => {
    let running = 0;
    let most = 0;
    let rounds = 0;
    const periodic = new Periodic(
      async () => {
        most = Math.max(most, ++running);
        await sleep(30);
        running--;
        rounds++;
      },
      { everyMs: 5, atStart: true, failed: () => undefined },
    );
    periodic.start();
    // Asked while one runs: the caller waits for that one rather than starting another.
    await periodic.runNow();
    await sleep(150);
    await periodic.stop();
    expect(most).toBe(1);
    expect(rounds).toBeGreaterThanOrEqual(2);
  });

  it('a round that throws is reported and the next one still comes', async () => {
    const failures: unknown[] = [];
    let rounds = 0;
    const periodic = new Periodic(
      async () => {
        rounds++;
        throw new Error(`round ${rounds} failed`);
      },
      { everyMs: 5, failed: (error) => failures.push(error) },
    );
    periodic.start();
    await sleep(100);
    await periodic.stop();
    expect(rounds).toBeGreaterThanOrEqual(2);
    expect(failures).toHaveLength(rounds);
    expect(String(failures[0])).toContain('round 1 failed');
  });

  it('with afterFailureMs, a round that threw is followed that soon, and the rounds after a good one by everyMs', async () => {
    let rounds = 0;
    const periodic = new Periodic(
      async () => {
        rounds++;
        if (rounds === 1) throw new Error('the database hiccupped');
      },
      { everyMs: 60_000, atStart: true, afterFailureMs: 20, failed: () => undefined },
    );
    periodic.start();
    await sleep(300);
    await periodic.stop();
    // The failed first round at start, its retry 20 ms later, then nothing for a minute.
    expect(rounds).toBe(2);
  });

  it('waits everyMs give or take the jitter between rounds', async () => {
    const startedAt: number[] = [];
    const periodic = new Periodic(async () => void startedAt.push(performance.now()), {
      everyMs: 40,
      jitter: 0.5,
      failed: () => undefined,
    });
    const from = performance.now();
    periodic.start();
    await sleep(400);
    await periodic.stop();
    const waits = startedAt.map((at, i) => at - (i === 0 ? from : startedAt[i - 1]!));
    expect(waits.length).toBeGreaterThanOrEqual(3);
    // At least 20 ms (40 ms less half of it); timers never fire early, but a loaded machine may fire them late.
    for (const wait of waits) expect(wait).toBeGreaterThanOrEqual(19);
    // Jittered: not every wait the same.
    expect(new Set(waits.map((w) => Math.round(w / 5))).size).toBeGreaterThan(1);
  });
});
