/**
 * A MongoDB wire proxy for fault tests: a TCP proxy on loopback between the service and the
 * database that forwards everything until told otherwise. It reads the wire protocol (OP_MSG,
 * opCode 2013) so that a fault can target chosen commands only.
 *
 *   const proxy = await startWireProxy(inject('mongoUri'));
 *   proxy.uri('test_db')                      // connect the service here (directConnection=true)
 *
 * Whole traffic:
 *   proxy.hold() / proxy.release()            // stop forwarding (both ways) / resume; held bytes
 *                                             // are delivered on release, in order
 *   proxy.delay(ms)                           // add ms before every message, each way (0: off)
 *   proxy.cut()                               // destroy every open connection, both sides
 *   proxy.refuse() / proxy.forward()          // cut, then accept-and-close every new connection
 *                                             // (a load balancer in front of a dead database) /
 *                                             // back to normal forwarding
 * Chosen commands (first key of the command document = name, its string value = collection):
 *   const rule = proxy.on({ command: 'update', collection: 'idempotencyKeys' }, { action: 'cut', at: 'request' })
 *     action 'cut':  destroy the connection, both sides
 *     action 'hold': wait `ms` (omitted: until proxy.release()), then go on
 *     action 'fail': answer { ok: 0, code, errmsg } to the client as the server's reply
 *     at 'request' (default): when the command arrives, before it is forwarded (not applied)
 *     at 'reply': after forwarding it, before the reply reaches the client (applied, unanswered)
 *     times: how many matching commands the rule acts on (default: all)
 *     match: a further predicate on the whole command (document sequences merged in as arrays)
 *   rule.hits; await rule.reached (the first hit); rule.remove()
 *   proxy.accepted                            // connections accepted so far
 *   await proxy.close()
 */
import net from 'node:net';
import { BSON, type Document } from 'mongodb';

export interface WireCommand {
  readonly name: string;
  readonly collection: string | undefined;
  readonly body: Document;
}

export interface WireMatch {
  readonly command?: string;
  readonly collection?: string;
  readonly match?: (command: WireCommand) => boolean;
}

export type WireAction =
  | { readonly action: 'cut'; readonly at?: 'request' | 'reply'; readonly times?: number }
  | { readonly action: 'hold'; readonly ms?: number; readonly at?: 'request' | 'reply'; readonly times?: number }
  | {
      readonly action: 'fail';
      readonly code?: number;
      readonly errmsg?: string;
      readonly at?: 'request' | 'reply';
      readonly times?: number;
    };

export interface WireRule {
  readonly hits: number;
  /** Resolves with the first command the rule acted on. */
  readonly reached: Promise<WireCommand>;
  remove(): void;
}

export interface WireProxy {
  readonly port: number;
  readonly accepted: number;
  uri(dbName: string): string;
  hold(): void;
  release(): void;
  delay(ms: number): void;
  cut(): void;
  refuse(): void;
  forward(): void;
  on(match: WireMatch, action: WireAction): WireRule;
  close(): Promise<void>;
}

const OP_MSG = 2013;
const HEADER = 16;

interface Rule extends WireMatch {
  readonly act: WireAction;
  hits: number;
  readonly reached: Promise<WireCommand>;
  readonly onReached: (command: WireCommand) => void;
}

/** The command of an OP_MSG message, or undefined for anything else. */
export function readCommand(message: Buffer): WireCommand | undefined {
  if (message.readInt32LE(12) !== OP_MSG) return undefined;
  const flags = message.readUInt32LE(HEADER);
  const end = message.length - (flags & 1 ? 4 : 0);
  let body: Document | undefined;
  const sequences: Record<string, Document[]> = {};
  for (let at = HEADER + 4; at < end;) {
    const kind = message[at++];
    const size = message.readInt32LE(at);
    if (kind === 0) body = BSON.deserialize(message.subarray(at, at + size));
    else {
      const idEnd = message.indexOf(0, at + 4);
      const docs: Document[] = [];
      for (let d = idEnd + 1; d < at + size; d += message.readInt32LE(d))
        docs.push(BSON.deserialize(message.subarray(d, d + message.readInt32LE(d))));
      sequences[message.toString('utf8', at + 4, idEnd)] = docs;
    }
    at += size;
  }
  if (!body) return undefined;
  const name = Object.keys(body)[0]!;
  const value = body[name];
  const collection = typeof value === 'string' ? value : typeof body.collection === 'string' ? body.collection : undefined;
  return { name, collection, body: { ...body, ...sequences } };
}

/** An OP_MSG reply answering `requestId` with an error document. */
function errorReply(requestId: number, code: number, errmsg: string): Buffer {
  const doc = BSON.serialize({ ok: 0, code, codeName: 'InjectedFault', errmsg });
  const message = Buffer.alloc(HEADER + 5 + doc.length);
  message.writeInt32LE(message.length, 0);
  message.writeInt32LE(Math.floor(Math.random() * 2 ** 30), 4);
  message.writeInt32LE(requestId, 8);
  message.writeInt32LE(OP_MSG, 12);
  message.writeUInt32LE(0, HEADER);
  message[HEADER + 4] = 0;
  message.set(doc, HEADER + 5);
  return message;
}

/** Splits a byte stream into whole wire messages (each starts with its int32 length). */
function framer(onMessage: (message: Buffer) => void): (chunk: Buffer) => void {
  let buffered = Buffer.alloc(0);
  return (chunk) => {
    buffered = Buffer.concat([buffered, chunk]);
    while (buffered.length >= 4 && buffered.length >= buffered.readInt32LE(0)) {
      const length = buffered.readInt32LE(0);
      onMessage(buffered.subarray(0, length));
      buffered = buffered.subarray(length);
    }
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function startWireProxy(targetUri: string): Promise<WireProxy> {
  const target = new URL(targetUri);
  const targetPort = Number(target.port || 27017);
  const sockets = new Set<net.Socket>();
  const rules = new Set<Rule>();
  let refusing = false;
  let delayMs = 0;
  let gate: { promise: Promise<void>; open: () => void } | undefined;
  let waitingForRelease: (() => void)[] = [];
  let accepted = 0;

  const untilRelease = () => new Promise<void>((resolve) => waitingForRelease.push(resolve));
  const pass = async () => {
    if (delayMs > 0) await sleep(delayMs);
    while (gate) await gate.promise;
  };

  function ruleFor(command: WireCommand | undefined): Rule | undefined {
    if (!command) return undefined;
    for (const rule of rules) {
      if (rule.command !== undefined && rule.command !== command.name) continue;
      if (rule.collection !== undefined && rule.collection !== command.collection) continue;
      if (rule.match && !rule.match(command)) continue;
      if (rule.hits >= (rule.act.times ?? Infinity)) continue;
      rule.hits += 1;
      rule.onReached(command);
      return rule;
    }
    return undefined;
  }

  /** Acts on one message; true when it should still be forwarded. */
  async function apply(act: WireAction, requestId: number, client: net.Socket, upstream: net.Socket): Promise<boolean> {
    if (act.action === 'cut') {
      client.destroy();
      upstream.destroy();
      return false;
    }
    if (act.action === 'hold') {
      await (act.ms === undefined ? untilRelease() : sleep(act.ms));
      return true;
    }
    client.write(errorReply(requestId, act.code ?? 11600, act.errmsg ?? 'injected fault (wire proxy)'));
    return false;
  }

  function pipe(client: net.Socket): void {
    accepted += 1;
    if (refusing) {
      client.destroy();
      return;
    }
    const upstream = net.connect(targetPort, target.hostname);
    sockets.add(client).add(upstream);
    const closeBoth = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', closeBoth).on('close', closeBoth);
    upstream.on('error', closeBoth).on('close', closeBoth);
    // Replies that a rule acts on, by the request id they answer.
    const atReply = new Map<number, WireAction>();
    let toServer = Promise.resolve();
    let toClient = Promise.resolve();
    client.on(
      'data',
      framer((message) => {
        toServer = toServer.then(async () => {
          await pass();
          const rule = ruleFor(readCommand(message));
          const requestId = message.readInt32LE(4);
          if (rule && (rule.act.at ?? 'request') === 'reply') atReply.set(requestId, rule.act);
          else if (rule && !(await apply(rule.act, requestId, client, upstream))) return;
          if (!upstream.destroyed) upstream.write(message);
        });
      }),
    );
    upstream.on(
      'data',
      framer((message) => {
        toClient = toClient.then(async () => {
          await pass();
          const responseTo = message.readInt32LE(8);
          const act = atReply.get(responseTo);
          atReply.delete(responseTo);
          if (act && !(await apply(act, responseTo, client, upstream))) return;
          if (!client.destroyed) client.write(message);
        });
      }),
    );
  }

  const server = net.createServer(pipe);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  const cut = () => {
    for (const socket of sockets) socket.destroy();
    sockets.clear();
  };
  const release = () => {
    gate?.open();
    gate = undefined;
    const waiting = waitingForRelease;
    waitingForRelease = [];
    for (const resolve of waiting) resolve();
  };

  return {
    port,
    get accepted() {
      return accepted;
    },
    uri(dbName) {
      return `mongodb://127.0.0.1:${port}/${dbName}?directConnection=true`;
    },
    hold() {
      if (gate) return;
      let open!: () => void;
      const promise = new Promise<void>((resolve) => (open = resolve));
      gate = { promise, open };
    },
    release,
    delay(ms) {
      delayMs = ms;
    },
    cut,
    refuse() {
      refusing = true;
      cut();
    },
    forward() {
      refusing = false;
    },
    on(match, act) {
      let onReached!: (command: WireCommand) => void;
      const reached = new Promise<WireCommand>((resolve) => (onReached = resolve));
      const rule: Rule = { ...match, act, hits: 0, reached, onReached };
      rules.add(rule);
      return {
        get hits() {
          return rule.hits;
        },
        reached,
        remove: () => void rules.delete(rule),
      };
    },
    async close() {
      release();
      cut();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
