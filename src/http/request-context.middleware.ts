/**
 * Gives every request an id (echoed from X-Request-Id when sane, generated otherwise) and
 * `Cache-Control: no-store`, tells the HTTP metrics of it, and logs it once done: everything a
 * request needs around it in one step of the chain, not one middleware each.
 */
import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import { runWithRequestId, type Logger } from '../logger.js';
import type { RequestObserver } from '../observability/metrics.js';
import { redactedPath } from '../portal/portal-paths.js';

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function requestContextMiddleware(log: Logger, observer?: RequestObserver): Middleware {
  return (ctx, next) => {
    const given = ctx.get('x-request-id');
    const reqId = SAFE_REQUEST_ID.test(given) ? given : randomUUID();
    ctx.set('X-Request-Id', reqId);
    // Every answer, errors included: set here rather than by a middleware of its own, one step fewer per request.
    ctx.set('Cache-Control', 'no-store');
    const started = performance.now();
    observer?.started();
    const done = () => {
      const seconds = (performance.now() - started) / 1000;
      observer?.answered(ctx, seconds);
      // Below `info` (the bench runs at `warn`) the line is not built at all.
      if (log.isLevelEnabled('info'))
        log.info({ method: ctx.method, path: redactedPath(ctx.path), status: ctx.status, durationMs: seconds * 1000 }, 'request completed');
    };
    // The rest of the chain runs in the request's context (its id on every log line), and so does `done`.
    return runWithRequestId(reqId, () =>
      next().then(done, (error: unknown) => {
        done();
        throw error;
      }),
    );
  };
}
