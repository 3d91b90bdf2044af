/**
 * The client a merchant makes once: the generated operations, grouped as the spec's tags, behind
 * retries with idempotency keys (./retry.ts) and with each error answer thrown as its code's type.
 */
import {
  APIKeysApi,
  BulkRequestsApi,
  Configuration,
  CustomerPortalApi,
  EventsApi,
  HoldsApi,
  PausePolicyApi,
  PlansApi,
  SubscriptionsApi,
  TestHelpersApi,
  WebhookEndpointsApi,
  type Middleware,
} from '../index.js';
import { PROBLEM_TYPES } from '../problems.js';
import { ProblemError, problemOf } from './problem.js';
import { retryingFetch, type RetryOptions } from './retry.js';

export interface ClientOptions extends RetryOptions {
  /** A live (`sk_…`) or test (`sk_test_…`) key. */
  readonly apiKey: string;
  /** The service's base URL, without `/v2`; http://localhost:8080 unless set. */
  readonly baseUrl?: string;
  /** The `fetch` to send with; the global one unless set. */
  readonly fetch?: typeof fetch;
  /** Headers sent with every request (e.g. `Prefer` for the Prism mock). */
  readonly headers?: Record<string, string>;
}

/** Throws an error answer as its code's type (a ProblemError for a code the spec does not list). */
const typedErrors: Middleware = {
  async post({ response }) {
    if (response.ok) return response;
    const body = await problemOf(response);
    const Type = PROBLEM_TYPES[String(body.code)] ?? ProblemError;
    throw new Type(response.status, body, response.headers.get('x-request-id') ?? undefined);
  },
};

export class SubsvcClient {
  /** The generated client's configuration, for an API class of its own: `new XApi(client.configuration)`. */
  readonly configuration: Configuration;
  readonly subscriptions: SubscriptionsApi;
  readonly bulkRequests: BulkRequestsApi;
  readonly holds: HoldsApi;
  readonly events: EventsApi;
  readonly webhookEndpoints: WebhookEndpointsApi;
  readonly pausePolicy: PausePolicyApi;
  readonly apiKeys: APIKeysApi;
  readonly plans: PlansApi;
  readonly customerPortal: CustomerPortalApi;
  readonly testHelpers: TestHelpersApi;

  constructor(options: ClientOptions) {
    this.configuration = new Configuration({
      basePath: options.baseUrl ?? 'http://localhost:8080',
      apiKey: options.apiKey,
      headers: options.headers,
      fetchApi: retryingFetch(options, options.fetch),
      middleware: [typedErrors],
    });
    this.subscriptions = new SubscriptionsApi(this.configuration);
    this.bulkRequests = new BulkRequestsApi(this.configuration);
    this.holds = new HoldsApi(this.configuration);
    this.events = new EventsApi(this.configuration);
    this.webhookEndpoints = new WebhookEndpointsApi(this.configuration);
    this.pausePolicy = new PausePolicyApi(this.configuration);
    this.apiKeys = new APIKeysApi(this.configuration);
    this.plans = new PlansApi(this.configuration);
    this.customerPortal = new CustomerPortalApi(this.configuration);
    this.testHelpers = new TestHelpersApi(this.configuration);
  }
}

/** A page of any list operation: `{data, hasMore, nextCursor}`. */
export interface Page<T> {
  data: T[];
  hasMore: boolean;
  nextCursor?: string | null;
}

/** The item type of a list operation's pages. */
export type ItemOf<F extends (...args: never[]) => Promise<Page<unknown>>> = Awaited<ReturnType<F>> extends Page<infer T> ? T : never;

/**
 * Every item of every page of a list operation, fetching each page as the loop reaches it:
 * `for await (const s of listAll((p) => client.subscriptions.listSubscriptions(p), { limit: 100 }))`.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any list operation's own parameters
export async function* listAll<F extends (params: any) => Promise<Page<unknown>>>(
  list: F,
  params: Parameters<F>[0] & { startingAfter?: string },
): AsyncGenerator<ItemOf<F>, void, undefined> {
  let cursor = params.startingAfter;
  for (;;) {
    const page = await list(cursor === undefined ? params : { ...params, startingAfter: cursor });
    for (const item of page.data) yield item as ItemOf<F>;
    if (!page.hasMore || !page.nextCursor) return;
    cursor = page.nextCursor;
  }
}
