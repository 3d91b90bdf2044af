/** The Koa application: request context, errors, body, then the spec's operations. */
import Koa from 'koa';
import { apiKeyHandlers } from '../api-keys/api-keys.handlers.js';
import type { ApiKeysService } from '../api-keys/api-keys.service.js';
import type { AuthService } from '../auth/auth.service.js';
import type { eventHandlers } from '../events/events.handlers.js';
import type { webhookHandlers } from '../webhooks/webhooks.handlers.js';
import type { destinationHandlers } from '../event-destinations/destinations.handlers.js';
import type { testModeHandlers } from '../test-mode/test-mode.handlers.js';
import type { holdHandlers } from '../holds/holds.handlers.js';
import type { portalLinkHandlers } from '../portal/portal-links.handlers.js';
import type { planHandlers } from '../plans/plans.handlers.js';
import type { billingHandlers } from '../billing/billing.handlers.js';
import type { BillingSyncRepository } from '../billing/billing-sync.repository.js';
import { withBillingSync } from '../billing/billing-sync.reads.js';
import type { analyticsHandlers } from '../analytics/analytics.handlers.js';
import type { Logger } from '../logger.js';
import type { SubscriptionsService } from '../subscriptions/subscriptions.service.js';
import type { LifecycleService } from '../subscriptions/lifecycle.js';
import { lifecycleHandlers } from '../subscriptions/lifecycle.handlers.js';
import { importHandlers } from '../imports/imports.handlers.js';
import type { ImportsService } from '../imports/imports.service.js';
import { pausePolicyHandlers } from '../pause-policy/pause-policy.handlers.js';
import type { PausePolicyService } from '../pause-policy/pause-policy.service.js';
import { bulkPreviewHandlers, bulkRequestHandlers, bulkUndoHandlers } from '../bulk/bulk.handlers.js';
import type { BulkStatusService } from '../bulk/bulk.status.js';
import type { BulkUndoService } from '../bulk/bulk.undo.js';
import type { BulkAcceptor } from '../subscriptions/bulk.selection.js';
import { subscriptionCommandHandlers, subscriptionReadHandlers } from '../subscriptions/subscriptions.handlers.js';
import { jsonBodyMiddleware } from './body.middleware.js';
import { clientAddressMiddleware, TrustedProxies } from './client-address.js';
import { docsRouter } from './docs.routes.js';
import { healthRouter, type Readiness } from './health.routes.js';
import { createOpenApiBackend, openApiMiddleware, type TestModeAtTheEdge } from './openapi.js';
import { problemMiddleware } from './problem.middleware.js';
import type { RateLimiter } from './rate-limit.js';
import { idempotent } from '../idempotency/idempotency.js';
import type { IdempotencyRepository } from '../idempotency/idempotency.repository.js';
import { operationHandlers, type OperationHandlers } from '../request-context/request-context.js';
import { requestContextMiddleware } from './request-context.middleware.js';
import { httpRequestObserver, metricsRoute, OPERATION_ID, type Metrics } from '../observability/metrics.js';
import { httpTracingMiddleware, tracingOn } from '../observability/tracing.js';
import { isPortalPath, redactedPath } from '../portal/portal-paths.js';

const CLIENT_GONE = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'ERR_HTTP_REQUEST_TIMEOUT', 'ERR_STREAM_PREMATURE_CLOSE']);

export interface AppDependencies {
  readonly auth: AuthService;
  readonly apiKeys: ApiKeysService;
  readonly subscriptions: SubscriptionsService;
  readonly lifecycle: LifecycleService;
  readonly imports: ImportsService;
  readonly pausePolicies: PausePolicyService;
  readonly bulk: BulkAcceptor;
  readonly bulkStatus: BulkStatusService;
  readonly bulkUndo: BulkUndoService;
  /** Events and webhook endpoints (src/events/events.handlers.ts, src/webhooks/webhooks.handlers.ts). */
  readonly webhooks: ReturnType<typeof eventHandlers> & ReturnType<typeof webhookHandlers> & ReturnType<typeof destinationHandlers>;
  /** The test helpers (src/test-mode/test-mode.handlers.ts). */
  readonly testHelpers: ReturnType<typeof testModeHandlers>;
  /** Holds (src/holds/holds.handlers.ts). */
  readonly holds: ReturnType<typeof holdHandlers>;
  /** Plan names (src/plans/plans.handlers.ts). */
  readonly plans: ReturnType<typeof planHandlers>;
  /** Billing connections (src/billing/billing.handlers.ts). */
  readonly billing: ReturnType<typeof billingHandlers>;
  /** Where each subscription stands with the billing system, which its reads show (src/billing/billing-sync.reads.ts). */
  readonly billingSync: Pick<BillingSyncRepository, 'of'>;
  /** Pause analytics and the resume forecast (src/analytics/analytics.handlers.ts). */
  readonly analytics: ReturnType<typeof analyticsHandlers>;
  /** Portal links through the API, and the customers' pages (src/portal/). */
  readonly portal: { readonly handlers: ReturnType<typeof portalLinkHandlers>; readonly pages: Koa.Middleware };
  readonly readiness: Readiness;
  /** undefined: no rate limit. */
  readonly limiter: RateLimiter | undefined;
  /** Failed authentications per client address; undefined: no limit. */
  readonly authFailures: RateLimiter | undefined;
  /** TRUSTED_PROXIES: the proxies whose X-Forwarded-For names the client (none: the peer is the client). */
  readonly trustedProxies?: readonly string[];
  readonly idempotency: IdempotencyRepository;
  /** Failures on demand for test keys (src/test-mode/test-outcomes.ts), and live keys refused in a sandbox; undefined: neither. */
  readonly testMode?: TestModeAtTheEdge;
  readonly log: Logger;
  /** Requests counted, and GET /metrics served here when `route` (METRICS_PORT unset); undefined: METRICS=off. */
  readonly metrics?: { readonly registry: Metrics; readonly route: boolean } | undefined;
}

/** The API's paths (the spec's server URL): none of them is health's, metrics' or the docs'. */
const API_ROOT = '/v2/';

/**
 * The middlewares, in turn, for requests outside the API's root only; under it, the next one at
 * once: one step of the chain for an API request, however many there are.
 */
function outsideApi<C extends Koa.Context>(...middlewares: ((ctx: C, next: Koa.Next) => unknown)[]): (ctx: C, next: Koa.Next) => unknown {
  const from = (i: number, ctx: C, next: Koa.Next): Promise<unknown> =>
    i === middlewares.length ? next() : Promise.resolve(middlewares[i]!(ctx, () => from(i + 1, ctx, next)));
  return (ctx, next) => (ctx.path.startsWith(API_ROOT) ? next() : from(0, ctx, next));
}

export async function createApp(deps: AppDependencies): Promise<Koa> {
  const { auth, apiKeys, subscriptions, pausePolicies, bulk, bulkStatus, webhooks, readiness, limiter, authFailures, idempotency, log } =
    deps;
  const httpLog = log.child({ component: 'http' });
  const { listSubscriptions, ...reads } = withBillingSync(subscriptionReadHandlers(subscriptions), deps.billingSync);
  const commands = operationHandlers({
    ...subscriptionCommandHandlers(subscriptions, bulk),
    ...pausePolicyHandlers(pausePolicies),
    ...lifecycleHandlers(deps.lifecycle, listSubscriptions),
    ...importHandlers(deps.imports),
  });
  const { createHold, ...holdReads } = deps.holds;
  const { putPlan, ...planReads } = deps.plans;
  const { putStripeConnection, syncStripeConnection, ...billingOthers } = deps.billing;
  const holdCommands = operationHandlers({ createHold, putPlan, putStripeConnection, syncStripeConnection });
  // Commands are made safe to retry; reads and bulk previews, which store nothing, are safe as they are.
  const handlers: OperationHandlers = {
    pauseSubscription: idempotent(idempotency, httpLog, commands.pauseSubscription),
    resumeSubscription: idempotent(idempotency, httpLog, commands.resumeSubscription),
    bulkPauseSubscriptions: idempotent(idempotency, httpLog, commands.bulkPauseSubscriptions),
    bulkResumeSubscriptions: idempotent(idempotency, httpLog, commands.bulkResumeSubscriptions),
    putPausePolicy: idempotent(idempotency, httpLog, commands.putPausePolicy),
    // A retried hold without its key would place a second one over the whole store.
    createHold: idempotent(idempotency, httpLog, holdCommands.createHold),
    putPlan: idempotent(idempotency, httpLog, holdCommands.putPlan),
    putStripeConnection: idempotent(idempotency, httpLog, holdCommands.putStripeConnection),
    // A retried backfill without its key would read Stripe into a second import.
    syncStripeConnection: idempotent(idempotency, httpLog, holdCommands.syncStripeConnection),
    createSubscription: idempotent(idempotency, httpLog, commands.createSubscription),
    updateSubscription: idempotent(idempotency, httpLog, commands.updateSubscription),
    cancelSubscription: idempotent(idempotency, httpLog, commands.cancelSubscription),
    listSubscriptions: commands.listSubscriptions,
    // The same key answers the first import's 202, whatever file it sends.
    createSubscriptionImport: idempotent(idempotency, httpLog, commands.createSubscriptionImport),
    getSubscriptionImport: commands.getSubscriptionImport,
    listSubscriptionImportRows: commands.listSubscriptionImportRows,
    getPausePolicy: commands.getPausePolicy,
    ...operationHandlers({
      ...reads,
      ...bulkRequestHandlers(bulkStatus),
      ...bulkUndoHandlers(deps.bulkUndo, bulk),
      ...bulkPreviewHandlers(bulk, (id) => subscriptions.clock(id)),
      ...webhooks,
      ...apiKeyHandlers(apiKeys),
      ...deps.testHelpers,
      ...holdReads,
      ...planReads,
      ...billingOthers,
      ...deps.analytics,
      ...deps.portal.handlers,
    }),
  };
  const api = await createOpenApiBackend(auth, handlers, { requests: limiter, authFailures }, undefined, deps.testMode);

  const app = new Koa();
  const trustedProxies = deps.trustedProxies ?? [];
  // Behind trusted proxies Koa reads X-Forwarded-For (ctx.ips); the client is then taken from it.
  if (trustedProxies.length > 0) {
    app.proxy = true;
    app.use(clientAddressMiddleware(new TrustedProxies(trustedProxies)));
  }
  // What Koa reports after the problem middleware is done: a connection that failed under the
  // response (a client that hung up, a 408 from node:http's timeouts). Logged, never printed raw.
  app.on('error', (error: Error & { code?: string }) => {
    const byClient = error.code !== undefined && CLIENT_GONE.has(error.code);
    httpLog[byClient ? 'debug' : 'warn']({ err: error }, 'response not delivered');
  });
  if (tracingOn()) app.use(httpTracingMiddleware(OPERATION_ID, redactedPath));
  const portalKind = (path: string) => (isPortalPath(path) ? 'portal' : undefined);
  app.use(requestContextMiddleware(httpLog, deps.metrics ? httpRequestObserver(deps.metrics.registry, portalKind) : undefined));
  app.use(problemMiddleware(httpLog, authFailures ? (ctx) => authFailures.report(ctx.ip, ctx) : undefined));
  // Health, metrics and docs live outside the API's root: a request under it skips their routers.
  app.use(
    outsideApi(
      healthRouter(readiness).routes(),
      ...(deps.metrics?.route ? [metricsRoute(deps.metrics.registry)] : []),
      docsRouter().routes(),
      deps.portal.pages,
    ),
  );
  app.use(jsonBodyMiddleware());
  app.use(openApiMiddleware(api));
  return app;
}
