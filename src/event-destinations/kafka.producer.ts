/**
 * The producer of one destination, and what its connections tell. The client retries a connection
 * that fails on its own, without failing the send: a refused password or an untrusted certificate
 * would only show as a send that never ends. So the failures of each producer's connections are
 * watched (the client's diagnostics channel), and one that no retry can mend ends the send at once.
 *
 * The brokers a cluster's metadata names are connected to by the client itself: each passes the
 * bootstrap servers' guard (broker-guard.ts) before its first connection, through the client's
 * connection hooks (the symbols it exports for subclasses), so that a broker reached as allowed
 * cannot lead the workers to an address that is not.
 */
import { rootCertificates } from 'node:tls';
import {
  connectionsConnectsChannel,
  kGetBootstrapConnection,
  kGetConnection,
  ProduceAcks,
  Producer,
  stringSerializers,
  type Broker,
  type Callback,
  type Connection,
  type ProducerOptions,
  type SASLMechanismValue,
} from '@platformatic/kafka';
import { clipped } from '../lib/text.js';
import type { SecretBox } from '../secrets/secret-box.js';
import { checkBrokers, type BrokerPolicy } from './broker-guard.js';
import type { PublishTarget } from './destinations.repository.js';

/** How long a broker's verdict is kept before its address is checked again. */
const VERDICT_MS = 60_000;

const addressOf = ({ host, port }: Broker) => (host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`);

/** A producer whose every broker connection first passes the guard. */
export class DestinationProducer extends Producer<string, string, string, string> {
  private readonly verdicts = new Map<string, { readonly until: number; readonly refusal: Error | undefined }>();
  /** Told of each refused broker: the client would retry it, and its send wait, without end. */
  onRefusal: ((refusal: Error) => void) | undefined;

  constructor(
    options: ProducerOptions<string, string, string, string>,
    private readonly brokers: BrokerPolicy,
  ) {
    super(options);
  }

  /** The brokers the metadata names: the partitions' leaders, the producer id's coordinator. */
  override [kGetConnection](broker: Broker, callback: Callback<Connection>): void {
    this.allowed([broker]).then(
      () => super[kGetConnection](broker, callback),
      (refusal: Error) => callback(refusal),
    );
  }

  /** The bootstrap servers (checked before the producer is made) and, once metadata is known, every broker it names. */
  override [kGetBootstrapConnection](callback: Callback<Connection>, attempt?: number): void {
    const named = [...(this.currentMetadata?.brokers.values() ?? [])];
    this.allowed(named).then(
      () => super[kGetBootstrapConnection](callback, attempt),
      (refusal: Error) => callback(refusal),
    );
  }

  private async allowed(brokers: readonly Broker[]): Promise<void> {
    for (const broker of brokers) {
      const address = addressOf(broker);
      let verdict = this.verdicts.get(address);
      if (!verdict || verdict.until < Date.now()) {
        const refusal = await checkBrokers([address], this.brokers).then(
          () => undefined,
          (error: Error) => new Error(`the brokers' metadata names ${address}, which is not allowed: ${error.message}`),
        );
        verdict = { until: Date.now() + VERDICT_MS, refusal };
        this.verdicts.set(address, verdict);
      }
      if (verdict.refusal) {
        this.onRefusal?.(verdict.refusal);
        throw verdict.refusal;
      }
    }
  }
}

/** One produce request's bound, retries within it included. */
const PRODUCE_TIMEOUT_MS = 5_000;

const MECHANISMS: Record<string, SASLMechanismValue> = {
  plain: 'PLAIN',
  'scram-sha-256': 'SCRAM-SHA-256',
  'scram-sha-512': 'SCRAM-SHA-512',
};

type Chain = { message?: string; name?: string; code?: string; cause?: unknown; errors?: unknown[] } | undefined;

/** A failure's message with what caused it (the client nests the broker's or the socket's error). */
export function describe(error: unknown): string {
  const parts: string[] = [];
  for (let e = error as Chain, depth = 0; e && depth < 5; depth++) {
    if (e.message && !parts.includes(e.message)) parts.push(e.message);
    e = (e.errors?.[0] ?? e.cause) as Chain;
  }
  return clipped(parts.join(': ') || String(error), 600);
}

/** A refused authentication, a certificate not trusted or not for this host: no retry mends it. */
function lasting(error: unknown): boolean {
  for (let e = error as Chain, depth = 0; e && depth < 5; depth++) {
    if (/^PLT_KFK_AUTHENTICATION$|CERT|ERR_TLS|SELF_SIGNED/.test(e.code ?? '')) return true;
    e = (e.errors?.[0] ?? e.cause) as Chain;
  }
  return false;
}

export interface ProducerSettings {
  readonly brokers: BrokerPolicy;
  readonly secrets: SecretBox;
  /** PEM certificates trusted besides the system's (KAFKA_CA_FILE). */
  readonly trustedCa: string | undefined;
}

/** An idempotent producer waiting for every in-sync replica, with the destination's TLS and SASL. */
export function producerOf(target: PublishTarget, settings: ProducerSettings): DestinationProducer {
  const { auth } = target;
  // `ca` replaces Node's trusted roots: the system's are kept beside the operator's.
  const tls = settings.trustedCa ? { ca: [...rootCertificates, settings.trustedCa] } : {};
  const options: ProducerOptions<string, string, string, string> = {
    clientId: `subsvc-${target.id}`,
    bootstrapBrokers: [...target.bootstrapServers],
    serializers: stringSerializers,
    idempotent: true,
    acks: ProduceAcks.ALL,
    autocreateTopics: false,
    timeout: PRODUCE_TIMEOUT_MS,
    connectTimeout: PRODUCE_TIMEOUT_MS,
    retries: 1,
    retryDelay: 200,
    ...(target.tls ? { tls } : {}),
    ...(auth
      ? { sasl: { mechanism: MECHANISMS[auth.mechanism]!, username: auth.username, password: settings.secrets.open(auth.sealedPassword) } }
      : {}),
  };
  return new DestinationProducer(options, settings.brokers);
}

/** The last failure of each watched producer's connections, and the sends it ends. */
export class ConnectionFailures {
  private readonly last = new Map<number, unknown>();
  private readonly ending = new Map<number, (error: Error) => void>();
  private readonly listener = (message: unknown) => {
    const { connection, error } = message as { connection?: { ownerId?: number }; error?: unknown };
    const owner = connection?.ownerId;
    if (owner === undefined || !this.last.has(owner)) return;
    this.last.set(owner, error);
    if (lasting(error)) this.ending.get(owner)?.(new Error(describe(error)));
  };

  start(): void {
    connectionsConnectsChannel.error.subscribe(this.listener);
  }

  stop(): void {
    connectionsConnectsChannel.error.unsubscribe(this.listener);
    this.last.clear();
  }

  watch(producer: DestinationProducer): void {
    this.last.set(producer.instanceId, undefined);
    producer.onRefusal = (refusal) => {
      this.last.set(producer.instanceId, refusal);
      this.ending.get(producer.instanceId)?.(refusal);
    };
  }

  forget(producer: DestinationProducer): void {
    this.last.delete(producer.instanceId);
    this.ending.delete(producer.instanceId);
  }

  /**
   * The send, ended by the first lasting failure of the producer's connections, or after
   * `deadlineMs` by `timedOut` (told the last failure seen, if any).
   */
  async bound<T>(
    producer: DestinationProducer,
    send: Promise<T>,
    deadlineMs: number,
    timedOut: (last: unknown) => Promise<Error>,
  ): Promise<T> {
    const id = producer.instanceId;
    let timer: NodeJS.Timeout | undefined;
    const ended = new Promise<never>((_, reject) => {
      this.ending.set(id, reject);
      timer = setTimeout(() => void timedOut(this.last.get(id)).then(reject, reject), deadlineMs);
    });
    try {
      return await Promise.race([send, ended]);
    } finally {
      clearTimeout(timer);
      this.ending.delete(id);
    }
  }
}
