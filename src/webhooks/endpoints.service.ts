/** Registering and managing webhook endpoints: at most 16 per merchant, URLs checked against SSRF. */
import { InvalidRequestError } from '../errors.js';
import { nowTimestamp } from '../lib/clock.js';
import { uuidv7 } from '../lib/ids.js';
import { livemodeOf } from '../merchants/livemode.js';
import type { Page, PageRequest } from '../lib/pagination.js';
import type { EndpointChanges, EndpointsRepository, WebhookEndpoint } from './endpoints.repository.js';
import { newSecret } from './signature.js';
import { resolveWebhookUrl } from './url-guard.js';
import { WebhookEndpointNotFoundError } from './webhooks.errors.js';

export const MAX_ENDPOINTS = 16;

// Where src/http/problem.middleware.ts imports it from.

export interface NewEndpoint {
  readonly url: string;
  readonly events: WebhookEndpoint['events'];
  readonly description?: string;
  readonly format?: WebhookEndpoint['format'];
}

export class EndpointsService {
  constructor(
    private readonly repository: EndpointsRepository,
    private readonly allowPrivateUrls: boolean,
  ) {}

  /** The endpoint with its secret: the only time the secret leaves the service. */
  async create(merchantId: string, input: NewEndpoint): Promise<WebhookEndpoint & { secret: string }> {
    await resolveWebhookUrl(input.url, this.allowPrivateUrls);
    // A check, then an insert: two concurrent registrations may pass 16 by one; the limit is a guard, not a quota.
    if ((await this.repository.count(merchantId)) >= MAX_ENDPOINTS) {
      throw new InvalidRequestError(`A merchant has at most ${MAX_ENDPOINTS} webhook endpoints; remove one first.`);
    }
    const endpoint: WebhookEndpoint = {
      id: uuidv7(),
      url: input.url,
      events: input.events,
      ...(input.description === undefined ? {} : { description: input.description }),
      ...(input.format === undefined ? {} : { format: input.format }),
      status: 'enabled',
      disabledReason: null,
      createdAt: nowTimestamp(),
      livemode: livemodeOf(merchantId),
    };
    const secret = newSecret();
    await this.repository.insert(merchantId, endpoint, secret);
    return { ...endpoint, secret };
  }

  list(merchantId: string, page: PageRequest): Promise<Page<WebhookEndpoint>> {
    return this.repository.page(merchantId, { ...page, startingAfter: page.startingAfter?.toLowerCase() });
  }

  async get(merchantId: string, id: string): Promise<WebhookEndpoint> {
    return this.found(id, await this.repository.find(merchantId, id.toLowerCase()));
  }

  async update(merchantId: string, id: string, changes: EndpointChanges): Promise<WebhookEndpoint> {
    if (changes.url !== undefined) await resolveWebhookUrl(changes.url, this.allowPrivateUrls);
    const byYou = changes.status === 'disabled' ? { disabledReason: null } : {};
    return this.found(id, await this.repository.update(merchantId, id.toLowerCase(), { ...changes, ...byYou }));
  }

  async delete(merchantId: string, id: string): Promise<void> {
    if (!(await this.repository.delete(merchantId, id.toLowerCase()))) this.found(id, undefined);
  }

  private found(id: string, endpoint: WebhookEndpoint | undefined): WebhookEndpoint {
    if (!endpoint) throw new WebhookEndpointNotFoundError(`Webhook endpoint ${id} not found`);
    return endpoint;
  }
}
