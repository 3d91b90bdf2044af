/**
 * A merchant's Stripe connection (docs/billing.md), per mode: connect, read, disconnect, and its
 * keys opened for the pushes. A test mode connects a Stripe test key only, a live mode a live key.
 */
import { randomUUID } from 'node:crypto';
import type { components } from '../../generated/openapi.js';
import { nowTimestamp } from '../lib/clock.js';
import { livemodeOf } from '../merchants/livemode.js';
import type { SecretBox } from '../secrets/secret-box.js';
import { BillingConnectionNotFoundError, StripeKeyModeError } from './billing.errors.js';
import type { PauseBehavior, StoredConnection, StripeConnectionsRepository } from './stripe-connections.repository.js';

export type StripeConnection = components['schemas']['StripeConnection'];
export type StripeConnectionPut = components['schemas']['StripeConnectionPut'];

/** Where Stripe sends its events for this connection (docs/billing.md "Connect"). */
export const webhookPath = (connectionId: string) => `/connectors/stripe/${connectionId}/webhooks`;

/** What a push needs of the connection, its API key opened. */
export interface PushCredentials {
  readonly connectionId: string;
  readonly apiKey: string;
  readonly pauseBehavior: PauseBehavior;
}

/** What checking and applying Stripe's events needs of the connection, its webhook secret opened. */
export interface EventsCredentials {
  readonly connectionId: string;
  readonly merchantId: string;
  readonly webhookSecret: string;
}

export class StripeConnectionsService {
  constructor(
    private readonly connections: StripeConnectionsRepository,
    private readonly box: SecretBox,
    /** PUBLIC_URL; undefined: the origin the request was sent to. */
    private readonly publicUrl: string | undefined,
  ) {}

  async put(merchantId: string, body: StripeConnectionPut, origin: string): Promise<StripeConnection> {
    const live = livemodeOf(merchantId);
    if (/_live_/.test(body.apiKey.slice(0, 8)) !== live)
      throw new StripeKeyModeError(
        live
          ? 'A live API key connects a live Stripe key (sk_live_… or rk_live_…), not a test one'
          : 'A test API key connects a Stripe test key (sk_test_… or rk_test_…), not a live one',
      );
    const stored = await this.connections.put(
      { id: randomUUID(), merchantId, system: 'stripe', createdAt: nowTimestamp() },
      {
        sealedApiKey: this.box.seal(body.apiKey),
        sealedWebhookSecret: this.box.seal(body.webhookSecret),
        apiKeyLast4: body.apiKey.slice(-4),
        pauseBehavior: body.pauseBehavior ?? 'void',
      },
    );
    return this.view(stored, origin);
  }

  async get(merchantId: string, origin: string): Promise<StripeConnection> {
    const stored = await this.connections.find(merchantId, 'stripe');
    if (!stored) throw new BillingConnectionNotFoundError('No stripe connection');
    return this.view(stored, origin);
  }

  async remove(merchantId: string): Promise<void> {
    if (!(await this.connections.remove(merchantId, 'stripe'))) throw new BillingConnectionNotFoundError('No stripe connection');
  }

  /** Whether the merchant has a connection: its changes are pushed. */
  async hasConnection(merchantId: string): Promise<boolean> {
    return (await this.connections.find(merchantId, 'stripe')) !== undefined;
  }

  /** The connection's key for a push; undefined when the merchant has none (pushes stop). */
  async credentials(merchantId: string): Promise<PushCredentials | undefined> {
    const stored = await this.connections.find(merchantId, 'stripe');
    if (!stored) return undefined;
    return { connectionId: stored.id, apiKey: this.box.open(stored.sealedApiKey), pauseBehavior: stored.pauseBehavior };
  }

  /** Records when a backfill last finished reading Stripe (`lastSyncAt`). */
  async synced(merchantId: string): Promise<void> {
    await this.connections.markSynced(merchantId, 'stripe', nowTimestamp());
  }

  /** The connection Stripe's events name, with its webhook secret opened; undefined when there is none. */
  async forEvents(connectionId: string): Promise<EventsCredentials | undefined> {
    const stored = await this.connections.findById(connectionId);
    if (!stored) return undefined;
    return { connectionId: stored.id, merchantId: stored.merchantId, webhookSecret: this.box.open(stored.sealedWebhookSecret) };
  }

  private view(stored: StoredConnection, origin: string): StripeConnection {
    const { id, apiKeyLast4, pauseBehavior, createdAt, lastSyncAt, merchantId } = stored;
    return {
      id,
      system: 'stripe',
      status: 'active',
      apiKeyLast4,
      pauseBehavior,
      webhookUrl: `${this.publicUrl ?? origin}${webhookPath(id)}`,
      createdAt,
      lastSyncAt,
      livemode: livemodeOf(merchantId),
    };
  }
}
