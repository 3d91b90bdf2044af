/**
 * `BENCH_ONLY=kafka npm run bench`, axis (l): the events of a bulk pause (BENCH_KAFKA_COUNT, 3000)
 * published to one Kafka destination on a real local broker (test/support/kafka-broker.ts), from
 * the bulk's 202 to the broker's last acknowledgement (`publishRatio`, target <= 1.5), against the
 * least any implementation does to publish them: the same bulk for a merchant without a
 * destination, from its 202 to its last event stored, then a raw idempotent producer sending the
 * same messages. `publishOverRawSendRatio` is the same path against the raw send alone (the bulk's
 * drain is most of it). And the bulk's own drain (202 to completed) with that destination against
 * a merchant without one (`drainRatio`, target <= 1.2). Rounds alternate, as every ratio of the
 * bench (scripts/bench-rounds.ts). Writes bench/results/kafka.json.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ProduceAcks, Producer, stringSerializers } from '@platformatic/kafka';
import type { Db } from 'mongodb';
import type { Config } from '../src/config.js';
import type { Logger } from '../src/logger.js';
import { projectRoot } from '../src/lib/project-root.js';
import { startService } from '../src/main/composition.js';
import { toCloudEvent } from '../src/events/cloudevent.js';
import { prepareKafka, startKafka } from '../test/support/kafka-broker.js';
import { spreadOf } from './bench-rounds.js';
import type { ScratchDatabase } from './support.js';

const COUNT = Number(process.env.BENCH_KAFKA_COUNT ?? 3000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

async function until(check: () => Promise<boolean>, timeoutMs = 600_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('bench (l): waited too long');
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function bulkPause(baseUrl: string, apiKey: string, ids: readonly string[]): Promise<string> {
  const res = await fetch(`${baseUrl}/v2/subscriptions/bulk/pause`, {
    method: 'POST',
    headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({ subscriptions: ids }),
  });
  if (res.status !== 202) throw new Error(`bulk pause answered ${res.status}`);
  return ((await res.json()) as { requestId: string }).requestId;
}

const completed = (db: Db, requestId: string) => async () =>
  (await db.collection('bulkRequests').countDocuments({ _id: requestId as never, completedAt: { $ne: null } })) === 1;

export async function benchKafkaMain(scratch: ScratchDatabase, config: Config, log: Logger): Promise<void> {
  const libs = await prepareKafka();
  if (!libs) return;
  const kafka = await startKafka(libs);
  const { db } = scratch;
  const running = await startService(scratch.database, { ...config, rateLimitPerSecond: 0, webhooksAllowPrivateUrls: true }, log, {
    port: 0,
    host: '127.0.0.1',
  });
  const { service, url: baseUrl } = running;
  const rounds: { publishMs: number; rawMs: number; drainWithMs: number; drainWithoutMs: number; storedWithoutMs: number }[] = [];
  /** From the 202 to the bulk's completion (`drainMs`) and to its last event stored (`storedMs`). */
  const timed = async (merchantId: string, apiKey: string, ids: readonly string[]) => {
    const started = performance.now();
    const requestId = await bulkPause(baseUrl, apiKey, ids);
    let drainMs = 0;
    const drained = until(completed(db, requestId)).then(() => (drainMs = performance.now() - started));
    await until(async () => (await db.collection('events').countDocuments({ merchantId, type: 'subscription.paused' })) >= COUNT);
    const storedMs = performance.now() - started;
    await drained;
    return { started, drainMs, storedMs };
  };
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const topic = `bench-${randomUUID().slice(0, 8)}`;
      await kafka.createTopic(topic, 4);
      // Without a destination first in even rounds, after in odd ones; each waits for its events.
      const without = async () => {
        const { merchantId, apiKey } = await service.auth.createMerchant('bench-kafka-without');
        const ids = (await service.seeder.seed({ merchantId, count: COUNT, status: 'fulfilled' })).map((s) => s.id);
        return timed(merchantId, apiKey, ids);
      };
      const withoutFirst = round % 2 === 0 ? await without() : undefined;
      const { merchantId, apiKey } = await service.auth.createMerchant('bench-kafka');
      const made = await fetch(`${baseUrl}/v2/event-destinations`, {
        method: 'POST',
        headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
        body: JSON.stringify({ type: 'kafka', bootstrapServers: [kafka.address], topic, tls: false, types: ['subscription.paused'] }),
      });
      if (made.status !== 201) throw new Error(`destination answered ${made.status}`);
      const ids = (await service.seeder.seed({ merchantId, count: COUNT, status: 'fulfilled' })).map((s) => s.id);
      const withKafka = await timed(merchantId, apiKey, ids);
      await until(async () => (await db.collection('destinationEvents').countDocuments({})) === 0);
      const publishMs = performance.now() - withKafka.started;
      const withoutKafka = withoutFirst ?? (await without());
      // The same messages from a raw producer: the stored events as CloudEvents, 500 per request.
      interface StoredEvent {
        _id: string;
        type: string;
        createdAt: string;
        data: { subscription: { id: string } };
      }
      const stored = await db.collection<StoredEvent>('events').find({ merchantId, type: 'subscription.paused' }).toArray();
      const messages = stored.map((e) => ({
        topic,
        key: e.data.subscription.id,
        value: JSON.stringify(toCloudEvent({ id: e._id, type: e.type, createdAt: e.createdAt, data: e.data })),
      }));
      const producer = new Producer({
        clientId: 'bench-raw',
        bootstrapBrokers: [kafka.address],
        serializers: stringSerializers,
        idempotent: true,
        acks: ProduceAcks.ALL,
      });
      const rawStart = performance.now();
      for (let i = 0; i < messages.length; i += 500) await producer.send({ messages: messages.slice(i, i + 500) });
      const rawMs = performance.now() - rawStart;
      await producer.close();
      rounds.push({
        publishMs,
        rawMs,
        drainWithMs: withKafka.drainMs,
        drainWithoutMs: withoutKafka.drainMs,
        storedWithoutMs: withoutKafka.storedMs,
      });
      console.error(
        `(l) round ${round + 1}: 202 to last ack ${publishMs.toFixed(0)} ms (its events stored at ${withKafka.storedMs.toFixed(0)} ms), raw producer ${rawMs.toFixed(0)} ms; ` +
          `without a destination, events stored at ${withoutKafka.storedMs.toFixed(0)} ms; drain with ${withKafka.drainMs.toFixed(0)} ms, without ${withoutKafka.drainMs.toFixed(0)} ms`,
      );
    }
  } finally {
    await running.stop(30_000);
    await kafka.stop();
  }
  const result = {
    axis: '(l) events to Kafka',
    engine: `${scratch.engine} ${scratch.version}`,
    count: COUNT,
    target: { publishRatio: '<= 1.5', drainRatio: '<= 1.2' },
    // The baseline: the same bulk without a destination (202 to its last event stored), then a raw producer's send.
    publishRatio: spreadOf(rounds.map((r) => r.publishMs / (r.storedWithoutMs + r.rawMs))),
    publishOverRawSendRatio: spreadOf(rounds.map((r) => r.publishMs / r.rawMs)),
    drainRatio: spreadOf(rounds.map((r) => r.drainWithMs / r.drainWithoutMs)),
    rounds,
  };
  const dir = join(projectRoot(), 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'kafka.json'), `${JSON.stringify(result, null, 2)}\n`);
  console.log(
    `(l) publishRatio ${result.publishRatio.median.toFixed(2)} (target <= 1.5), publishOverRawSendRatio ${result.publishOverRawSendRatio.median.toFixed(0)}, drainRatio ${result.drainRatio.median.toFixed(2)} (target <= 1.2): written to bench/results/kafka.json`,
  );
}
