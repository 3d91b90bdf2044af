/**
 * The producer of one destination, and what its connections tell. The client retries a connection
 * that fails on its own, without failing the send: a refused password or an untrusted certificate
 * would only show as a send that never ends. So the failures of each producer's connections are
 * watched (the client's diagnostics channel), and one that no retry can mend ends the send at once.
 */
import { rootCertificates } from 'node:tls';
import {
  connectionsConnectsChannel,
  ProduceAcks,
  Producer,
  stringSerializers,
  type ProducerOptions,
  type SASLMechanismValue,
} from '@platformatic/kafka';
import { clipped } from '../lib/text.js';
import type { SecretBox } from '../secrets/secret-box.js';
import type { PublishTarget } from './destinations.repository.js';

export type DestinationProducer = Producer<string, string, string, string>;

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
  return new Producer(options);
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
