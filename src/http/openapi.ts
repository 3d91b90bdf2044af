/**
 * openapi-backend routes every request by the spec's operationId and validates it against the
 * spec before a handler sees it. Its fallbacks (unknown route, wrong method, failed auth, invalid
 * request, an operation without a handler) throw catalogue errors that the problem middleware
 * renders.
 */
import addFormats from 'ajv-formats';
import type { Context as KoaContext, Middleware } from 'koa';
import { OpenAPIBackend, type Context, type Document, type Handler } from 'openapi-backend';
import { presentedApiKey, type AuthService } from '../auth/auth.service.js';
import type { Merchant } from '../auth/auth.service.js';
import { NotAuthenticatedError } from '../auth/auth.errors.js';
import { Problems, ProblemError } from '../errors.js';
import { loadSpec } from '../lib/spec.js';
import { metrics, OPERATION_ID } from '../observability/metrics.js';
import { merchantOf, type OperationHandlers } from '../request-context/request-context.js';
import { SCHEDULE_FIELDS } from '../subscriptions/schedule.request.js';
import { PrecompiledRouter } from './fast-router.js';
import type { RateLimiter } from './rate-limit.js';
import { ERRORS_LISTED, validationErrors } from './validation-errors.js';
import { answerAs } from './test-outcomes.js';
import type { TestOutcomes } from '../test-mode/test-outcomes.js';
import { TestModeOnlyError } from '../test-mode/test-mode.errors.js';
import { livemodeOf } from '../merchants/livemode.js';

/**
 * openapi-backend checks a definition against the OpenAPI 3.0 meta-schema only, which rejects a
 * valid 3.1 document (`info.summary`, `examples` in schemas). Our 3.1 spec is validated by
 * Redocly (`npm run lint:spec`, run by the tests); everything else stays strict.
 */
export class OpenApi31Backend extends OpenAPIBackend {
  override validateDefinition(): Document {
    return this.document;
  }

  /** The router built once from the dereferenced definition (http/fast-router.ts), for routing and validation alike. */
  override async init(): Promise<this> {
    await super.init();
    const router = new PrecompiledRouter({
      definition: this.definition,
      apiRoot: this.apiRoot,
      ignoreTrailingSlashes: this.ignoreTrailingSlashes,
    });
    this.router = router;
    if (this.validator) this.validator.router = router;
    return this;
  }
}

export interface Limits {
  /** Per merchant; undefined: no limit. */
  readonly requests: RateLimiter | undefined;
  /** Failed authentications per client address; undefined: no limit. */
  readonly authFailures: RateLimiter | undefined;
}

/** Failures on demand (src/test-mode/test-outcomes.ts), how long `timeout` holds its answer, and whether live keys are refused (a sandbox). */
export interface TestModeAtTheEdge {
  readonly outcomes: TestOutcomes;
  readonly holdMs?: number;
  readonly testKeysOnly?: boolean;
}

const SCHEDULE_PATHS = new Set<string>(SCHEDULE_FIELDS.map((field) => `/${field}`));

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

function header(c: Context, name: string): string | undefined {
  // openapi-backend types a parsed request's headers as any.
  const value = (c.request.headers as Record<string, string | string[] | undefined>)[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * The path as the router should see it. The router percent-decodes each segment once, and throws
 * on a segment that is not valid percent-encoding (a 500 before); such a segment is escaped so
 * that it decodes to itself: an id taken as written, which no subscription has.
 */
export function routablePath(path: string): string {
  // Only a '%' can make a segment fail to decode: most paths have none and are taken as they are.
  if (!path.includes('%')) return path;
  return path
    .split('/')
    .map((segment) => {
      try {
        decodeURIComponent(segment);
        return segment;
      } catch {
        return encodeURIComponent(segment);
      }
    })
    .join('/');
}

function allowedMethods(api: OpenAPIBackend, path: string): string {
  return METHODS.filter((method) => api.router.matchOperation({ method, path, headers: {} }))
    .map((method) => method.toUpperCase())
    .join(', ');
}

/**
 * Resolves the presented key (one lookup per request, both headers read) and counts failures per
 * client address. The key is looked up first: a valid key answers for its merchant under that
 * merchant's rate limit only, whatever others behind the same address sent; a failure from an
 * address past its limit is answered 429 with Retry-After instead of 401.
 */
function apiKeyHandler(auth: AuthService, failures: RateLimiter | undefined) {
  return async (c: Context, ctx: KoaContext): Promise<Merchant | undefined> => {
    let merchant: Merchant | undefined;
    try {
      merchant = await auth.authenticate(presentedApiKey(header(c, 'x-api-key'), header(c, 'x_api_key')));
    } catch (error) {
      // Two different keys presented count as a failed authentication.
      if (error instanceof NotAuthenticatedError) failures?.fail(ctx.ip, ctx);
      throw error;
    }
    if (!merchant) failures?.fail(ctx.ip, ctx);
    return merchant;
  };
}

function rethrowSecurityFailure(c: Context): void {
  for (const result of Object.values(c.security ?? {}) as unknown[]) {
    if (result && typeof result === 'object' && 'error' in result && result.error instanceof Error) throw result.error;
  }
}

export async function createOpenApiBackend(
  auth: AuthService,
  handlers: OperationHandlers,
  limits: Limits,
  definition: Document = loadSpec(),
  testMode?: TestModeAtTheEdge,
): Promise<OpenApi31Backend> {
  const api = new OpenApi31Backend({
    definition,
    strict: true,
    // Validators compile on first use: the service validates requests only, never responses.
    quick: true,
    // Report every offending entry of a bulk list, not just the first.
    ajvOpts: { allErrors: true },
    customizeAjv: (ajv) => {
      addFormats.default(ajv, ['uuid', 'uri-reference', 'date-time', 'date']);
      return ajv;
    },
  });
  // Both schemes name the same key: the ApiKey handler reads both headers, so that a request is
  // looked up once and two different keys are refused (merchantOf reads its result).
  api.registerSecurityHandler('ApiKey', apiKeyHandler(auth, limits.authFailures));
  api.registerSecurityHandler('ApiKeyUnderscore', () => undefined);
  api.register({
    ...(handlers as Record<string, Handler>),
    notFound: (_c: Context, ctx: KoaContext) => {
      throw new ProblemError(Problems.routeNotFound, `No route for ${ctx.method} ${ctx.path}`);
    },
    methodNotAllowed: (c: Context, ctx: KoaContext) => {
      const allow = allowedMethods(api, c.request.path);
      ctx.set('Allow', allow);
      throw new ProblemError(Problems.methodNotAllowed, `${ctx.method} is not allowed on ${ctx.path}; use ${allow}.`);
    },
    notImplemented: (c: Context) => {
      throw new ProblemError(Problems.notImplemented, `${c.operation.operationId} is in the API contract but not implemented yet.`);
    },
    // What the request is counted under in the metrics (src/observability/metrics.ts).
    postRoutingHandler: (c: Context, ctx: KoaContext) => {
      ctx.state[OPERATION_ID] = c.operation?.operationId;
    },
    // After authentication, before validation: a merchant over its limit gets 429 whatever it
    // sent; then a forced failure, before anything is done.
    postSecurityHandler: async (c: Context, ctx: KoaContext) => {
      // An operation open to all (a billing system's signed event) has no merchant to limit.
      if (!c.security?.authorized || c.operation.security?.length === 0) return;
      if (testMode?.testKeysOnly && livemodeOf(merchantOf(c).id)) {
        throw new TestModeOnlyError('This sandbox serves test mode only: use a test key (sk_test_...); live keys are refused.');
      }
      if (limits.requests) {
        try {
          limits.requests.enforce(merchantOf(c).id, ctx);
        } catch (error) {
          metrics()?.rateLimited.inc();
          throw error;
        }
      }
      const value = header(c, 'subsvc-test-outcome');
      if (!testMode || value === undefined) return;
      const merchantId = merchantOf(c).id;
      const scenario = await testMode.outcomes.outcomeOf({ merchantId, value, idempotencyKey: header(c, 'idempotency-key') });
      if (scenario) await answerAs(scenario, c, ctx, testMode.holdMs);
    },
    unauthorizedHandler: (c: Context) => {
      rethrowSecurityFailure(c);
      throw new ProblemError(Problems.unauthorized, 'A valid API key is required in the x-api-key header.');
    },
    validationFail: (c: Context) => {
      const { total, listed } = validationErrors(c.validation.errors);
      // Only schedule fields wrong (docs/design.md §9): 0043, naming them; a cancel's `reason` is no schedule's.
      const scheduleOnly = c.operation.operationId !== 'cancelSubscription' && listed.every((e) => SCHEDULE_PATHS.has(e.path));
      if (total > 0 && scheduleOnly) {
        throw new ProblemError(Problems.invalidSchedule, listed.map((e) => `${e.path.slice(1)} ${e.message}`).join('; ') + '.', listed);
      }
      const shown = total > ERRORS_LISTED ? ` (${total} errors; the first ${ERRORS_LISTED} are listed)` : '';
      throw new ProblemError(Problems.invalidRequest, `The request does not match the API contract${shown}.`, listed);
    },
  });
  await api.init();
  return api;
}

/** Hands the request to openapi-backend, which answers it or throws a catalogue error. */
export function openApiMiddleware(api: OpenAPIBackend): Middleware {
  return (ctx) =>
    api.handleRequest(
      {
        method: ctx.method,
        path: routablePath(ctx.path),
        query: ctx.querystring,
        headers: ctx.headers as Record<string, string | string[]>,
        body: ctx.request.body,
      },
      ctx,
    );
}
