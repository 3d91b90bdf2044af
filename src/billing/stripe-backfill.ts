/**
 * The backfill (docs/billing.md "Backfill"): every subscription of the connected Stripe account,
 * read page by page and streamed as NDJSON rows into a subscription import (src/imports/), which
 * creates or updates each by `externalId` as any import does. No second importer: the rows are
 * those a merchant would upload, mirrored from Stripe as its events are (stripe-events.service.ts).
 */
import { Readable } from 'node:stream';
import type Stripe from 'stripe';
import type { ImportDocument } from '../imports/imports.store.js';
import type { NewImport } from '../imports/imports.service.js';
import { BillingConnectionNotFoundError } from './billing.errors.js';
import type { StripeConnectionsService } from './stripe-connections.service.js';
import { ENDED_STATUSES, planIdOfPrice } from './stripe-events.service.js';
import type { StripeApi } from './stripe.client.js';

/** A Stripe subscription as an import's row (the fields of `POST /v2/subscriptions`). */
export function importRowOf(sub: Stripe.Subscription): Record<string, unknown> {
  const priceId = sub.items?.data?.[0]?.price?.id;
  const status = ENDED_STATUSES.has(sub.status) ? 'cancelled' : sub.pause_collection ? 'paused' : 'fulfilled';
  return {
    externalId: sub.id,
    ...(priceId !== undefined ? { planId: planIdOfPrice(priceId), metadata: { stripePriceId: priceId } } : {}),
    status,
  };
}

export class StripeBackfill {
  constructor(
    private readonly connections: Pick<StripeConnectionsService, 'credentials' | 'synced'>,
    private readonly stripe: Pick<StripeApi, 'subscriptionPages'>,
    private readonly imports: { accept(request: NewImport): Promise<ImportDocument> },
  ) {}

  /** Reads Stripe into an import: the import once every page is stored. */
  async start(merchantId: string, apiKeyId: string): Promise<ImportDocument> {
    const credentials = await this.connections.credentials(merchantId);
    if (!credentials) throw new BillingConnectionNotFoundError('No stripe connection');
    const pages = this.stripe.subscriptionPages(credentials.apiKey);
    async function* lines(): AsyncGenerator<string> {
      for await (const page of pages) yield page.map((sub) => `${JSON.stringify(importRowOf(sub))}\n`).join('');
    }
    const doc = await this.imports.accept({ merchantId, apiKeyId, format: 'ndjson', events: false, body: Readable.from(lines()) });
    await this.connections.synced(merchantId);
    return doc;
  }
}
