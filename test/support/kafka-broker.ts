/**
 * A real Apache Kafka broker for the tests: single node, KRaft (no ZooKeeper), on loopback. The
 * run's global setup fetches its jars once through Maven (`org.apache.kafka:kafka_2.13`) into
 * `.cache/kafka/<version>/libs` and formats a storage template (`prepareKafka`); each test file
 * that needs a broker starts its own from a copy of that template (`startKafka`), which it may
 * SIGKILL and restart, and stops it after. A machine without Java or Maven skips those tests with
 * one SKIPPED line.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Admin, Consumer, stringDeserializers, type Message } from '@platformatic/kafka';
import { projectRoot } from '../../src/lib/project-root.js';
import { skipStep } from '../../scripts/skipped-steps.js';

const run = promisify(execFile);

export const KAFKA_VERSION = '4.4.0';
const CACHE = join(projectRoot(), '.cache', 'kafka', KAFKA_VERSION);
const LIBS = join(CACHE, 'libs');
const TEMPLATE = join(CACHE, 'storage-template');
/** The template is formatted with these ids; every broker started from it uses them. */
const NODE_ID = 1;
const CLUSTER_ID = 'c3Vic3ZjLWthZmthLXRzdA';
/** A small heap and a quick JIT: the broker of a test handles a few thousand messages on a 2-core machine. */
const JVM = ['-Xms64m', '-Xmx320m', '-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1', '-XX:-UsePerfData', '-Djava.awt.headless=true'];

const POM = `<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.subsvc</groupId><artifactId>kafka-broker-for-tests</artifactId><version>1</version>
  <dependencies>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka_2.13</artifactId><version>${KAFKA_VERSION}</version></dependency>
  </dependencies>
</project>
`;

function properties(dataDir: string, port: number, controllerPort: number): string {
  return [
    'process.roles=broker,controller',
    `node.id=${NODE_ID}`,
    `controller.quorum.voters=${NODE_ID}@127.0.0.1:${controllerPort}`,
    `listeners=PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controllerPort}`,
    `advertised.listeners=PLAINTEXT://127.0.0.1:${port}`,
    'controller.listener.names=CONTROLLER',
    'listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT',
    'inter.broker.listener.name=PLAINTEXT',
    `log.dirs=${dataDir}`,
    // Topics are made by the tests: a destination's unknown topic is refused, as a real cluster would.
    'auto.create.topics.enable=false',
    'num.partitions=4',
    'offsets.topic.replication.factor=1',
    'offsets.topic.num.partitions=1',
    'transaction.state.log.replication.factor=1',
    'transaction.state.log.min.isr=1',
    'transaction.state.log.num.partitions=1',
    'share.coordinator.state.topic.replication.factor=1',
    'share.coordinator.state.topic.min.isr=1',
    'group.initial.rebalance.delay.ms=0',
    'num.network.threads=1',
    'num.io.threads=2',
    'background.threads=2',
    'num.recovery.threads.per.data.dir=1',
    'log.cleaner.enable=false',
    // What a test wrote is flushed by the OS page cache as usual; a SIGKILL of the JVM keeps it.
    '',
  ].join('\n');
}

const java = () => process.env.JAVA ?? 'java';

async function has(command: string, args: string[]): Promise<boolean> {
  try {
    await run(command, args, { timeout: 30_000 });
    return true;
  } catch {
    return false;
  }
}

/**
 * In the run's global setup: the jars (Maven, first run only) and a formatted storage template.
 * Undefined, with one SKIPPED line, where Java or Maven is missing.
 */
/** Whether prepareKafka can fetch and format Kafka here (Java, and Maven unless the jars are fetched), without a line saying it skipped. */
export async function javaAndMavenFound(): Promise<boolean> {
  if (!(await has(java(), ['-version']))) return false;
  return existsSync(join(LIBS, `kafka_2.13-${KAFKA_VERSION}.jar`)) || has('mvn', ['-v']);
}

export async function prepareKafka(): Promise<string | undefined> {
  if (!(await has(java(), ['-version']))) {
    skipStep('tests with a Kafka broker', 'no Java on this machine', 'install a Java 17+ runtime and Maven, then run the tests again');
    return undefined;
  }
  if (!existsSync(join(LIBS, `kafka_2.13-${KAFKA_VERSION}.jar`))) {
    if (!(await has('mvn', ['-v']))) {
      skipStep('tests with a Kafka broker', 'no Maven on this machine to fetch Kafka', 'install Maven, then run the tests again');
      return undefined;
    }
    console.log(`fetching Apache Kafka ${KAFKA_VERSION} through Maven into ${LIBS} (first run only)`);
    mkdirSync(CACHE, { recursive: true });
    const work = mkdtempSync(join(CACHE, 'fetch-'));
    writeFileSync(join(work, 'pom.xml'), POM);
    await run('mvn', ['-q', '-B', 'dependency:copy-dependencies', `-DoutputDirectory=${join(work, 'libs')}`, '-DincludeScope=runtime'], {
      cwd: work,
      timeout: 600_000,
      maxBuffer: 16 * 1024 * 1024,
    });
    rmSync(LIBS, { recursive: true, force: true });
    renameSync(join(work, 'libs'), LIBS);
    rmSync(work, { recursive: true, force: true });
  }
  if (!existsSync(join(TEMPLATE, 'meta.properties'))) {
    const work = mkdtempSync(join(CACHE, 'format-'));
    const config = join(work, 'server.properties');
    writeFileSync(config, properties(join(work, 'data'), 1, 2));
    await run(java(), [...JVM, '-cp', `${LIBS}/*`, 'kafka.tools.StorageTool', 'format', '-t', CLUSTER_ID, '-c', config], {
      timeout: 120_000,
    });
    rmSync(TEMPLATE, { recursive: true, force: true });
    renameSync(join(work, 'data'), TEMPLATE);
    rmSync(work, { recursive: true, force: true });
  }
  return LIBS;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

const accepts = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

export interface KafkaBroker {
  /** `127.0.0.1:<port>`. */
  readonly address: string;
  /** SIGKILL: the broker dies at once, as on a crash. */
  kill(): Promise<void>;
  /** Starts it again on the same port and data. */
  restart(): Promise<void>;
  createTopic(name: string, partitions: number): Promise<void>;
  /** Every message of the topic from its start, until `until` holds or `timeoutMs` passes. */
  consume(
    topic: string,
    until: (messages: readonly Message<string, string, string, string>[]) => boolean,
    timeoutMs?: number,
  ): Promise<Message<string, string, string, string>[]>;
  stop(): Promise<void>;
}

/** A broker of this test file, from a copy of the template, on free loopback ports. */
export async function startKafka(libs: string): Promise<KafkaBroker> {
  const home = mkdtempSync(join(tmpdir(), 'subsvc-kafka-'));
  const dataDir = join(home, 'data');
  cpSync(TEMPLATE, dataDir, { recursive: true });
  const [port, controllerPort] = [await freePort(), await freePort()];
  const config = join(home, 'server.properties');
  writeFileSync(config, properties(dataDir, port, controllerPort));
  let child: ChildProcess | undefined;
  let output = '';
  const start = async () => {
    output = '';
    child = spawn(java(), [...JVM, '-cp', `${libs}/*`, 'kafka.Kafka', config], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.on('data', (c: Buffer) => (output = (output + c.toString()).slice(-4000)));
    child.stderr!.on('data', (c: Buffer) => (output = (output + c.toString()).slice(-4000)));
    const deadline = Date.now() + 60_000;
    while (!(await accepts(port))) {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`the Kafka broker did not start: ${output}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const exited = () =>
    child && child.exitCode === null && child.signalCode === null ? new Promise((r) => child!.once('exit', r)) : Promise.resolve();
  await start();
  const address = `127.0.0.1:${port}`;
  const admin = () => new Admin({ clientId: 'tests', bootstrapBrokers: [address] });
  return {
    address,
    async kill() {
      const gone = exited();
      child?.kill('SIGKILL');
      await gone;
    },
    restart: start,
    async createTopic(name, partitions) {
      const client = admin();
      try {
        await client.createTopics({ topics: [name], partitions, replicas: 1 });
      } finally {
        await client.close();
      }
    },
    async consume(topic, until, timeoutMs = 120_000) {
      const consumer = new Consumer({
        groupId: `tests-${Math.random().toString(36).slice(2)}`,
        clientId: 'tests',
        bootstrapBrokers: [address],
        deserializers: stringDeserializers,
      });
      const messages: Message<string, string, string, string>[] = [];
      try {
        const stream = await consumer.consume({ topics: [topic], mode: 'earliest', autocommit: false });
        const timer = setTimeout(() => void stream.close(), timeoutMs);
        try {
          for await (const message of stream) {
            messages.push(message);
            if (until(messages)) break;
          }
        } finally {
          clearTimeout(timer);
          await stream.close().catch(() => undefined);
        }
      } finally {
        await consumer.close(true).catch(() => undefined);
      }
      return messages;
    },
    async stop() {
      const gone = exited();
      child?.kill('SIGTERM');
      const timer = setTimeout(() => child?.kill('SIGKILL'), 10_000);
      await gone;
      clearTimeout(timer);
      rmSync(home, { recursive: true, force: true });
    },
  };
}

/** The files of a broker's data folder (for a test that wants to see it is gone). */
export const listed = (dir: string) => (existsSync(dir) ? readdirSync(dir) : []);
