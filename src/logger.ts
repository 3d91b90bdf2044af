/**
 * pino JSON logs, or one readable line per entry on a terminal. The request id travels with the
 * request through AsyncLocalStorage, so every line written while serving it carries `reqId`,
 * whichever component writes it.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { createRequire } from 'node:module';
import { pino, type DestinationStream, type Logger } from 'pino';
import type { LogLevel } from './config.js';
import { traceFields } from './observability/tracing.js';

export type { Logger };

interface RequestContext {
  readonly reqId: string;
}

const requestContext = new AsyncLocalStorage<RequestContext>();

export function runWithRequestId<T>(reqId: string, fn: () => T): T {
  return requestContext.run({ reqId }, fn);
}

/** Header names whose values are secrets: never written to a log line. */
const redactedPaths = ['apiKey', '*.apiKey', 'headers["x-api-key"]', 'headers["x_api_key"]', '*.headers["x-api-key"]'];

export function createLogger(level: LogLevel, destination?: DestinationStream): Logger {
  const options = {
    level,
    base: { service: 'subsvc' },
    redact: { paths: redactedPaths, censor: '[redacted]' },
    mixin: () => {
      const context = requestContext.getStore();
      // trace_id and span_id of the active span when tracing is on (src/observability/tracing.ts).
      const traced = traceFields();
      if (!traced) return context ? { reqId: context.reqId } : {};
      return context ? { reqId: context.reqId, ...traced } : traced;
    },
  };
  return destination ? pino(options, destination) : pino(options);
}

type PrettyFactory = (options: Record<string, unknown>) => DestinationStream;

/**
 * pino-pretty's stream for a terminal; undefined where it is not installed (an image built without
 * dev dependencies), and the logs stay JSON. Synchronous, so that what the process prints after a
 * log line comes after it on the screen.
 */
export function terminalDestination(): DestinationStream | undefined {
  let pretty: PrettyFactory;
  try {
    pretty = createRequire(import.meta.url)('pino-pretty') as PrettyFactory;
  } catch {
    return undefined;
  }
  return pretty({ sync: true, colorize: true, singleLine: true, translateTime: 'SYS:HH:MM:ss', ignore: 'pid,hostname,service' });
}
