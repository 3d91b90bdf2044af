/**
 * `npx tsx scripts/profile/chunk-update.ts`: what a chunk's own update costs beside the raw one,
 * with no queue, run or relay around it: 3000 subscriptions paused per 100 through the service's
 * update (its conditional updateMany with the command's mark, the pause time and the events
 * in the outbox; the repository's applyCommand, as a worker's chunk calls it), against the same ids paused raw (bench (b)'s baseline: updateMany of status and
 * modifiedAt), PROFILE_ROUNDS (default 5) rounds alternating the two. The events relay is not
 * started, so the outboxes stay as a drain leaves them until its run ends.
 */
import { randomUUID } from 'node:crypto';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { nowTimestamp } from '../../src/lib/clock.js';
import { startService } from '../../src/main/composition.js';
import { planCommand } from '../../src/subscriptions/subscriptions.rules.js';
import { LOOPBACK_WITHOUT_WORKERS, openScratchDatabase } from '../support.js';

const ROUNDS = Number(process.env.PROFILE_ROUNDS ?? 5);
const IDS = 3000;
const CHUNK = 100;
const log = createLogger('warn');
const config = loadConfig();
const scratch = await openScratchDatabase(config, 'chunk_update', log);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
try {
  const running = await startService(scratch.database, { ...config, rateLimitPerSecond: 0 }, log, LOOPBACK_WITHOUT_WORKERS);
  const { service } = running;
  const { merchantId } = await service.auth.createMerchant('chunk update');
  const subscriptions = scratch.db.collection('subscriptions');
  const fresh = async () => {
    await subscriptions.deleteMany({});
    return (await service.seeder.seed({ merchantId, count: IDS, status: 'fulfilled' })).map((s) => s.id);
  };
  const timed = async (fn: () => Promise<unknown>) => {
    const start = performance.now();
    await fn();
    return performance.now() - start;
  };
  // The repository's update itself: the service's applyCommands would also hand each change to the events relay at once (a worker's defers it while chunks run).
  const plan = planCommand('PAUSE', undefined, undefined);
  const serviceMs: number[] = [];
  const rawMs: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const ids = await fresh();
    const requestId = randomUUID();
    serviceMs.push(
      await timed(async () => {
        for (let i = 0; i < IDS; i += CHUNK) {
          const chunk = ids.slice(i, i + CHUNK);
          const command = { merchantId, ids: chunk, requestId, at: nowTimestamp(), cause: { kind: 'bulk', requestId } as const };
          await service.subscriptionStores.bulkCommands.applyCommand(command, plan);
        }
      }),
    );
    const rawIds = await fresh();
    const at = nowTimestamp();
    rawMs.push(
      await timed(async () => {
        for (let i = 0; i < IDS; i += CHUNK) {
          await subscriptions.updateMany(
            { _id: { $in: rawIds.slice(i, i + CHUNK) as never[] }, merchantId, status: 'fulfilled' },
            { $set: { status: 'paused', modifiedAt: at } },
          );
        }
      }),
    );
    console.error(`round ${round + 1}: service ${serviceMs.at(-1)!.toFixed(0)} ms, raw ${rawMs.at(-1)!.toFixed(0)} ms`);
  }
  const ratios = serviceMs.map((s, i) => s / rawMs[i]!);
  console.log(
    `${IDS} paused per ${CHUNK}: applyCommand median ${median(serviceMs).toFixed(0)} ms, raw updateMany ${median(rawMs).toFixed(0)} ms; ratio median ${median(ratios).toFixed(2)} (${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}), ${ROUNDS} alternating rounds`,
  );
  await running.stop(30_000);
} finally {
  await scratch.close();
}
