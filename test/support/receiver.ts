/** A webhook receiver on loopback: records every delivery, verified with `standardwebhooks` (not our code), and answers as told. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { expect } from 'vitest';
import { call } from './http.js';

export interface Received {
  readonly id: string;
  readonly verified: boolean;
  /** The W3C trace context the delivery carried, if any. */
  readonly traceparent?: string | undefined;
  readonly contentType?: string | undefined;
  readonly body: { type: string; timestamp: string; data: Record<string, any> };
}

export interface Receiver {
  readonly url: string;
  readonly received: Received[];
  /** The status the next deliveries get (a queue; 200 once it is empty). */
  answers: number[];
  /** How long each answer waits; with it, `maxInFlight` shows how many deliveries overlapped. */
  delayMs: number;
  maxInFlight: number;
  secret: string | undefined;
  close(): Promise<void>;
}

export async function startReceiver(port = 0): Promise<Receiver> {
  const receiver: Receiver = {
    url: '',
    received: [],
    answers: [],
    delayMs: 0,
    maxInFlight: 0,
    secret: undefined,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  let inFlight = 0;
  const server: Server = createServer((req, res) => {
    receiver.maxInFlight = Math.max(receiver.maxInFlight, ++inFlight);
    let text = '';
    req.on('data', (chunk: Buffer) => (text += chunk.toString()));
    req.on('end', () => {
      let verified: boolean;
      try {
        new Webhook(receiver.secret!).verify(text, req.headers as Record<string, string>);
        verified = true;
      } catch {
        verified = false;
      }
      receiver.received.push({
        id: String(req.headers['webhook-id']),
        verified,
        body: JSON.parse(text),
        traceparent: req.headers.traceparent as string | undefined,
        contentType: req.headers['content-type'],
      });
      const status = receiver.answers.shift() ?? 200;
      setTimeout(() => {
        inFlight--;
        res.writeHead(status).end();
      }, receiver.delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  (receiver as { url: string }).url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  return receiver;
}

/**
 * A receiver registered through the API as a webhook endpoint of the key's merchant for `events`,
 * verifying with the secret the endpoint was given; pushed onto `receivers` for the caller to close.
 */
export async function registeredReceiver(
  baseUrl: string,
  apiKey: string,
  events: readonly string[],
  receivers: Receiver[],
): Promise<{ receiver: Receiver; id: string }> {
  const receiver = await startReceiver();
  receivers.push(receiver);
  const res = await call(baseUrl, '/v2/webhook-endpoints', { method: 'POST', apiKey, json: { url: receiver.url, events } });
  expect(res.status).toBe(201);
  expect(res.body.secret).toMatch(/^whsec_/);
  receiver.secret = res.body.secret;
  return { receiver, id: res.body.id };
}
