/**
 * openapi-backend routes every request by the spec's operationId and validates it against the
 * spec before a handler sees it. Its fallbacks (unknown route, failed auth, invalid request)
 * throw catalogue errors that the problem middleware renders.
 */
import addFormats from 'ajv-formats';
import type { Context as KoaContext } from 'koa';
import { OpenAPIBackend, type Context, type Document, type Handler } from 'openapi-backend';
import type { ErrorObject } from 'ajv';
import { Problems, ProblemError, type FieldError } from '../errors.js';
import { loadSpec } from '../lib/spec.js';
import type { AuthService } from '../auth/auth.service.js';
import type { Merchant } from '../auth/merchants.repository.js';
import type { RateLimiter } from './rate-limit.js';

/**
 * openapi-backend checks a definition against the OpenAPI 3.0 meta-schema only, which rejects a
 * valid 3.1 document (`info.summary`, `examples` in schemas). Our 3.1 spec is validated by
 * Redocly (`npm run lint:spec`, run by the tests); everything else stays strict.
 */
export class OpenApi31Backend extends OpenAPIBackend {
  override validateDefinition(): Document {
    return this.document;
  }
}

export type OperationHandler = (c: Context, ctx: KoaContext) => Promise<void>;

function header(c: Context, name: string): string | undefined {
  const value = c.request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** Ajv's errors as `{path, message}`: JSON Pointers into the body, or the part of the request. */
function fieldErrors(errors: ErrorObject[] | null | undefined): FieldError[] {
  return (errors ?? []).map((e) => {
    const [part, ...rest] = e.instancePath.split('/').filter(Boolean);
    const where = part === 'requestBody' ? `/${rest.join('/')}` : e.instancePath || '/';
    const property = e.keyword === 'additionalProperties' ? `: ${String(e.params.additionalProperty)}` : '';
    return { path: where, message: `${e.message ?? 'is invalid'}${property}` };
  });
}

/** The merchant the request's API key resolved to (set by the security handlers). */
export function merchantOf(c: Context): Merchant {
  const merchant = (c.security?.ApiKey ?? c.security?.ApiKeyUnderscore) as Merchant | undefined;
  if (!merchant) throw new ProblemError(Problems.unauthorized, 'A valid API key is required in the x-api-key header.');
  return merchant;
}

function rethrowSecurityFailure(c: Context): void {
  for (const result of Object.values(c.security ?? {})) {
    if (result && typeof result === 'object' && 'error' in result && result.error instanceof Error) throw result.error;
  }
}

export async function createOpenApiBackend(
  auth: AuthService,
  handlers: Record<string, OperationHandler>,
  limiter: RateLimiter | undefined,
): Promise<OpenApi31Backend> {
  const api = new OpenApi31Backend({
    definition: loadSpec(),
    strict: true,
    // Validators compile on first use: the service validates requests only, never responses.
    quick: true,
    // Report every offending entry of a bulk list, not just the first.
    ajvOpts: { allErrors: true },
    customizeAjv: (ajv) => {
      addFormats.default(ajv, ['uuid', 'uri-reference', 'date-time']);
      return ajv;
    },
  });
  api.registerSecurityHandler('ApiKey', (c) => auth.authenticate(header(c, 'x-api-key')));
  api.registerSecurityHandler('ApiKeyUnderscore', (c) => auth.authenticate(header(c, 'x_api_key')));
  api.register({
    ...(handlers as Record<string, Handler>),
    notFound: (c: Context) => {
      throw new ProblemError(Problems.routeNotFound, `No route for ${c.request.method.toUpperCase()} ${c.request.path}`);
    },
    methodNotAllowed: (c: Context) => {
      throw new ProblemError(Problems.routeNotFound, `No route for ${c.request.method.toUpperCase()} ${c.request.path}`);
    },
    // After authentication, before validation: a merchant over its limit gets 429 whatever it sent.
    postSecurityHandler: (c: Context, ctx: KoaContext) => {
      if (limiter && c.security?.authorized) limiter.enforce(merchantOf(c).id, ctx);
    },
    unauthorizedHandler: (c: Context) => {
      rethrowSecurityFailure(c);
      throw new ProblemError(Problems.unauthorized, 'A valid API key is required in the x-api-key header.');
    },
    validationFail: (c: Context) => {
      throw new ProblemError(
        Problems.invalidRequest,
        'The request does not match the API contract.',
        fieldErrors(c.validation.errors),
      );
    },
  });
  await api.init();
  return api;
}
