/**
 * A real Apache Kafka broker for the tests: single node, KRaft (no ZooKeeper), on loopback. The
 * run's global setup fetches its jars once through Maven (`org.apache.kafka:kafka_2.13`) into
 * `.cache/kafka/<version>/libs`, then makes a self-signed keystore with Java's `keytool` and
 * formats a storage template holding the SCRAM users (`prepareKafka`), both into
 * `.cache/kafka-broker/<version>/`; each test file that needs a broker starts its own from a copy
 * of that template (`startKafka`), which it may SIGKILL and restart, and stops it after. The broker
 * listens twice: PLAINTEXT, and SASL_SSL with SCRAM-SHA-256 and -512 (`saslSslAddress`, `scram`,
 * `caPem`). A machine without Java or Maven skips those tests with one SKIPPED line.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { Admin, Consumer, stringDeserializers, type Message } from '@platformatic/kafka';
import { projectRoot } from '../../src/lib/project-root.js';
import { skipStep } from '../../scripts/skipped-steps.js';

const run = promisify(execFile);

export const KAFKA_VERSION = '4.4.0';
const CACHE = join(projectRoot(), '.cache', 'kafka', KAFKA_VERSION);
const LIBS = join(CACHE, 'libs');
/** What the harness makes from the jars: the storage template (with its SCRAM users) and the TLS keystore. */
const MADE = join(projectRoot(), '.cache', 'kafka-broker', KAFKA_VERSION);
const TEMPLATE = join(MADE, 'storage-template');
const KEYSTORE = join(MADE, 'broker.p12');
const CA_PEM = join(MADE, 'broker-ca.pem');
/** The keystore's password: a test fixture, like the SCRAM user's. */
const KEYSTORE_PASSWORD = 'subsvc-test-keystore';
/** The SCRAM user the template is formatted with, for both SCRAM mechanisms. */
export const SCRAM_USER = { username: 'subsvc-tests', password: 'subsvc-tests-scram-password' } as const;
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

interface Ports {
  readonly plain: number;
  readonly saslSsl: number;
  readonly controller: number;
}

const SCRAM_JAAS = 'org.apache.kafka.common.security.scram.ScramLoginModule required;';

function properties(dataDir: string, { plain, saslSsl, controller }: Ports): string {
  return [
    'process.roles=broker,controller',
    `node.id=${NODE_ID}`,
    `controller.quorum.voters=${NODE_ID}@127.0.0.1:${controller}`,
    `listeners=PLAINTEXT://127.0.0.1:${plain},SASL_SSL://127.0.0.1:${saslSsl},CONTROLLER://127.0.0.1:${controller}`,
    `advertised.listeners=PLAINTEXT://127.0.0.1:${plain},SASL_SSL://127.0.0.1:${saslSsl}`,
    'controller.listener.names=CONTROLLER',
    'listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SASL_SSL:SASL_SSL',
    'inter.broker.listener.name=PLAINTEXT',
    // The second listener: TLS with the self-signed keystore, then a SCRAM user of the template.
    'sasl.enabled.mechanisms=SCRAM-SHA-256,SCRAM-SHA-512',
    `listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config=${SCRAM_JAAS}`,
    `listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=${SCRAM_JAAS}`,
    'ssl.keystore.type=PKCS12',
    `ssl.keystore.location=${KEYSTORE}`,
    `ssl.keystore.password=${KEYSTORE_PASSWORD}`,
    `ssl.key.password=${KEYSTORE_PASSWORD}`,
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
/** keytool beside the java that runs the broker. */
const keytool = () => (process.env.JAVA ? join(dirname(process.env.JAVA), 'keytool') : 'keytool');

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
  if (!existsSync(CA_PEM)) await makeKeystore();
  if (!existsSync(join(TEMPLATE, 'meta.properties'))) await formatTemplate();
  return LIBS;
}

/** A self-signed certificate for 127.0.0.1 in a PKCS12 keystore, and the certificate alone as PEM: the CA a client trusts. */
async function makeKeystore(): Promise<void> {
  mkdirSync(MADE, { recursive: true });
  const work = mkdtempSync(join(MADE, 'keystore-'));
  const store = join(work, 'broker.p12');
  const pass = ['-storepass', KEYSTORE_PASSWORD, '-keypass', KEYSTORE_PASSWORD];
  await run(
    keytool(),
    ['-genkeypair', '-alias', 'broker', '-keyalg', 'RSA', '-keysize', '2048', '-validity', '3650', '-storetype', 'PKCS12'].concat([
      '-keystore',
      store,
      ...pass,
      '-dname',
      'CN=127.0.0.1',
      '-ext',
      'SAN=IP:127.0.0.1,DNS:localhost',
    ]),
    { timeout: 120_000 },
  );
  await run(
    keytool(),
    ['-exportcert', '-rfc', '-alias', 'broker', '-keystore', store, '-storepass', KEYSTORE_PASSWORD, '-file', join(work, 'ca.pem')],
    {
      timeout: 120_000,
    },
  );
  renameSync(store, KEYSTORE);
  renameSync(join(work, 'ca.pem'), CA_PEM);
  rmSync(work, { recursive: true, force: true });
}

/** The storage template, formatted with the SCRAM user for both mechanisms (`kafka-storage format --add-scram`). */
async function formatTemplate(): Promise<void> {
  mkdirSync(MADE, { recursive: true });
  const work = mkdtempSync(join(MADE, 'format-'));
  const config = join(work, 'server.properties');
  writeFileSync(config, properties(join(work, 'data'), { plain: 1, saslSsl: 2, controller: 3 }));
  const user = `name=${SCRAM_USER.username},password=${SCRAM_USER.password}`;
  const scram = ['SCRAM-SHA-256', 'SCRAM-SHA-512'].flatMap((mechanism) => ['--add-scram', `${mechanism}=[${user}]`]);
  await run(java(), [...JVM, '-cp', `${LIBS}/*`, 'kafka.tools.StorageTool', 'format', '-t', CLUSTER_ID, '-c', config, ...scram], {
    timeout: 120_000,
  });
  rmSync(TEMPLATE, { recursive: true, force: true });
  renameSync(join(work, 'data'), TEMPLATE);
  rmSync(work, { recursive: true, force: true });
}

/** The PEM certificate of the SASL_SSL listener (self-signed: its own CA), once prepareKafka has run: what a client must trust. */
export const kafkaCaPem = (): string => readFileSync(CA_PEM, 'utf8');

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
  /** `127.0.0.1:<port>`: PLAINTEXT. */
  readonly address: string;
  /** `127.0.0.1:<port>`: SASL_SSL (TLS, then SCRAM_USER with SCRAM-SHA-256 or -512). */
  readonly saslSslAddress: string;
  /** SIGKILL: the broker dies at once, as on a crash. */
  kill(): Promise<void>;
  /** Starts it again on the same port and data. */
  restart(): Promise<void>;
  createTopic(name: string, partitions: number): Promise<void>;
  /**
   * A TCP forwarder on another loopback port to the PLAINTEXT listener: a bootstrap address that
   * the broker's metadata does not name (it names `address`). `close` ends it.
   */
  forwarder(): Promise<{ readonly address: string; close(): Promise<void> }>;
  /** Every message of the topic from its start, until `until` holds or `timeoutMs` passes. */
  consume(
    topic: string,
    until: (messages: readonly Message<string, string, string, string>[]) => boolean,
    timeoutMs?: number,
  ): Promise<Message<string, string, string, string>[]>;
  stop(): Promise<void>;
}

/** How long one consumer group reads before a new one starts over (KafkaBroker.consume). */
const CONSUME_ROUND_MS = 40_000;

/** Every message of the topic from its start, read by a new consumer group, until `until` holds or `timeoutMs` passes. */
async function consumeRound(
  address: string,
  topic: string,
  until: (messages: readonly Message<string, string, string, string>[]) => boolean,
  timeoutMs: number,
): Promise<Message<string, string, string, string>[]> {
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
}

/** What the broker holds of a topic, per partition: whether a message the tests miss was published at all. */
async function heldIn(address: string, topic: string): Promise<string> {
  const consumer = new Consumer({ groupId: 'tests-offsets', clientId: 'tests', bootstrapBrokers: [address] });
  try {
    const ends = (await consumer.listOffsets({ topics: [topic] })).get(topic) ?? [];
    return `topic ${topic} holds ${ends.reduce((n, end) => n + end, 0n)} messages (partitions' end offsets ${ends.join(', ')})`;
  } catch (error) {
    return `topic ${topic}: its offsets could not be read (${(error as Error).message})`;
  } finally {
    await consumer.close(true).catch(() => undefined);
  }
}

/** A broker of this test file, from a copy of the template, on free loopback ports. */
export async function startKafka(libs: string): Promise<KafkaBroker> {
  const home = mkdtempSync(join(tmpdir(), 'subsvc-kafka-'));
  const dataDir = join(home, 'data');
  cpSync(TEMPLATE, dataDir, { recursive: true });
  const ports = { plain: await freePort(), saslSsl: await freePort(), controller: await freePort() };
  const port = ports.plain;
  const config = join(home, 'server.properties');
  writeFileSync(config, properties(dataDir, ports));
  let child: ChildProcess | undefined;
  let output = '';
  const start = async () => {
    output = '';
    child = spawn(java(), [...JVM, '-cp', `${libs}/*`, 'kafka.Kafka', config], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.on('data', (c: Buffer) => (output = (output + c.toString()).slice(-4000)));
    child.stderr!.on('data', (c: Buffer) => (output = (output + c.toString()).slice(-4000)));
    const deadline = Date.now() + 60_000;
    while (!(await accepts(port)) || !(await accepts(ports.saslSsl))) {
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
    saslSslAddress: `127.0.0.1:${ports.saslSsl}`,
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
    async forwarder() {
      const sockets = new Set<Socket>();
      const server = createServer((client) => {
        const upstream = connect(port, '127.0.0.1');
        for (const socket of [client, upstream]) {
          sockets.add(socket);
          socket.once('close', () => sockets.delete(socket));
          socket.on('error', () => undefined);
        }
        client.pipe(upstream).pipe(client);
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      return {
        address: `127.0.0.1:${(server.address() as { port: number }).port}`,
        close: () =>
          new Promise<void>((resolve) => {
            for (const socket of sockets) socket.destroy();
            server.close(() => resolve());
          }),
      };
    },
    async consume(topic, until, timeoutMs = 120_000) {
      const deadline = Date.now() + timeoutMs;
      let messages: Message<string, string, string, string>[];
      // Each round is a new consumer group from the topic's start: a group consumer that stalls (seen once, on a fresh broker
      // under load: 3 of 5 messages in 120 s) is replaced rather than waited on.
      do messages = await consumeRound(address, topic, until, Math.min(CONSUME_ROUND_MS, deadline - Date.now()));
      while (!until(messages) && Date.now() < deadline);
      if (!until(messages)) console.warn(`kafka: ${await heldIn(address, topic)}; the tests' consumer read ${messages.length}`);
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
