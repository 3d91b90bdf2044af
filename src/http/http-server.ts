/** The node:http server every process listens with: slow or stalled clients are cut off with 408. */
import { createServer, type RequestListener, type Server } from 'node:http';
import type { Config } from '../config.js';

export type HttpLimits = Pick<Config, 'headersTimeoutMs' | 'requestTimeoutMs'>;

export function createHttpServer({ headersTimeoutMs, requestTimeoutMs }: HttpLimits, listener: RequestListener): Server {
  return createServer(
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
}
