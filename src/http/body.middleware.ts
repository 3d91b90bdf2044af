/**
 * Reads JSON bodies of up to 256 KiB (docs/design.md §7). A body of another media type answers 415
 * before anything is read; a request without a body reaches the operation with `{}`.
 */
import type { Middleware } from 'koa';
import bodyParser from 'koa-bodyparser';
import { Problems, ProblemError } from '../errors.js';

export const BODY_LIMIT_BYTES = 256 * 1024;
const MERGE_PATCH = 'application/merge-patch+json';
const IMPORTS_PATH = '/v2/subscription-imports';
const IMPORT_TYPES = ['application/x-ndjson', 'text/csv'];

/**
 * raw-body marks its errors with a `type`; inflation throws an untyped 415 for a Content-Encoding
 * it cannot decode; co-body throws a SyntaxError for bad JSON.
 */
function toBodyProblem(error: Error & { type?: string; status?: number }): ProblemError {
  if (error.type === undefined && error.status === 415) {
    return new ProblemError(Problems.unsupportedMediaType, `${error.message}; send identity, gzip, deflate or br.`);
  }
  switch (error.type) {
    case 'entity.too.large':
      return new ProblemError(Problems.payloadTooLarge, `The request body exceeds ${BODY_LIMIT_BYTES} bytes.`);
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new ProblemError(Problems.unsupportedMediaType, 'The request body encoding is not supported.');
    case 'request.aborted':
    case 'request.size.invalid':
      return new ProblemError(Problems.invalidRequest, 'The request body could not be read completely.');
    default:
      return new ProblemError(Problems.invalidRequest, 'The request body is not valid JSON (an object is expected).', [
        { path: '/', message: error instanceof SyntaxError ? 'malformed JSON' : 'unreadable body' },
      ]);
  }
}

export function jsonBodyMiddleware(): Middleware {
  const parse = bodyParser({
    enableTypes: ['json'],
    // A PATCH's JSON merge patch (RFC 7396) is JSON too.
    extendTypes: { json: [MERGE_PATCH] },
    jsonLimit: `${BODY_LIMIT_BYTES}b`,
    strict: true,
    onerror: (error) => {
      throw toBodyProblem(error);
    },
  });
  return async (ctx, next) => {
    const { headers } = ctx.req;
    const hasBody = headers['transfer-encoding'] !== undefined || Number(headers['content-length'] ?? '0') > 0;
    // No body: what the parser would give (`{}`), without its steps (a single pause sends none).
    if (!hasBody) {
      ctx.request.body = {};
      await next();
      return;
    }
    // An import's file is streamed to storage by its operation (src/imports/), never parsed here.
    if (ctx.method === 'POST' && ctx.path === IMPORTS_PATH) {
      if (!ctx.is(...IMPORT_TYPES)) {
        const type = ctx.get('content-type') || 'none';
        throw new ProblemError(Problems.unsupportedMediaType, `Content-Type ${type} is not supported; send ${IMPORT_TYPES.join(' or ')}.`);
      }
      ctx.request.body = '';
      await next();
      return;
    }
    if (!ctx.is('application/json', MERGE_PATCH)) {
      const type = ctx.get('content-type') || 'none';
      throw new ProblemError(Problems.unsupportedMediaType, `Content-Type ${type} is not supported; send application/json.`);
    }
    await parse(ctx, next);
  };
}
