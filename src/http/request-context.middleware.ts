/** Gives every request an id (echoed from X-Request-Id when sane, generated otherwise) and `Cache-Control: no-store`, and logs it once done. */
import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import { runWithRequestId, type Logger } from '../logger.js';

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function requestContextMiddleware(log: Logger): Middleware {
  return async (ctx, next) => {
    const given = ctx.get('x-request-id');
    const reqId = SAFE_REQUEST_ID.test(given) ? given : randomUUID();
    ctx.set('X-Request-Id', reqId);
    // Every answer, errors included: set here rather than by a middleware of its own, one step fewer per request.
    ctx.set('Cache-Control', 'no-store');
    const started = process.hrtime.bigint();
    await runWithRequestId(reqId, async () => {
      try {
        await next();
      } finally {
        // Below `info` (the bench runs at `warn`) the line is not built at all.
        if (log.isLevelEnabled('info')) {
          const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
          log.info({ method: ctx.method, path: ctx.path, status: ctx.status, durationMs }, 'request completed');
        }
      }
    });
  };
}
