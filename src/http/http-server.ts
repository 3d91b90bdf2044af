/**
 * The node:http server every process listens with: slow or stalled clients are cut off with 408.
 * What node:http refuses before the app sees a request (408, 431, bytes that are not HTTP) is
 * answered like every other error: problem+json from the catalogue, with an X-Request-Id.
 */
import { randomUUID } from 'node:crypto';
import { STATUS_CODES, createServer, type RequestListener, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Config } from '../config.js';
import { Problems, problemBody, type ProblemKind } from '../errors.js';
import { isBoundedByItself } from '../lib/own-bound.js';

export type HttpLimits = Pick<Config, 'headersTimeoutMs' | 'requestTimeoutMs'>;

function refusal(code: string | undefined): { kind: ProblemKind; detail: string } {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return { kind: Problems.headersTooLarge, detail: 'The request headers exceed 16 KiB.' };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { kind: Problems.requestTimeout, detail: 'The request was not received in time.' };
    default:
      return { kind: Problems.invalidRequest, detail: 'The request is not valid HTTP/1.1.' };
  }
}

/** Answers what node:http refused on this connection, then closes it (as node:http's own answer does). */
function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  // As node:http does: write nothing once a response on this connection has started (a client
  // that hung up, or a timeout in the middle of an answer), only close.
  // A request that bounds itself (an import's upload, lib/own-bound.ts) goes on past the request
  // timeout: node:http leaves the connection as it is when this listener does nothing.
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT' && isBoundedByItself(socket)) return;
  const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (error.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  const { kind, detail } = refusal(error.code);
  const body = JSON.stringify(problemBody(kind, detail));
  const head = [
    `HTTP/1.1 ${kind.status} ${STATUS_CODES[kind.status]}`,
    'Content-Type: application/problem+json',
    `Content-Length: ${Buffer.byteLength(body)}`,
    `X-Request-Id: ${randomUUID()}`,
    'Cache-Control: no-store',
    'Connection: close',
  ];
  socket.end(`${head.join('\r\n')}\r\n\r\n${body}`, () => socket.destroy());
}

export function createHttpServer({ headersTimeoutMs, requestTimeoutMs }: HttpLimits, listener: RequestListener): Server {
  const server = createServer(
    {
      headersTimeout: headersTimeoutMs,
      requestTimeout: requestTimeoutMs,
      keepAliveTimeout: 5_000,
      // Node checks both timeouts on this interval (30 s by default), so a timeout is only as
      // precise as the interval: check often enough for the shortest one configured.
      connectionsCheckingInterval: Math.min(1_000, headersTimeoutMs),
    },
    listener,
  );
  server.on('clientError', answerClientError);
  return server;
}
