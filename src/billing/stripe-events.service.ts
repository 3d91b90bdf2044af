/**
 * Stripe → the service (docs/billing.md "What comes from Stripe"): a connection's signed events
 * about subscriptions, applied through the lifecycle and the subscriptions service (the one write
 * path) with `cause: {kind: "billing", system: "stripe", eventId}`, which the pushes never send back.
 * Each event is applied once; one older than the last applied to its subscription, or Stripe's
 * echo of a push the service sent (named by the push's Idempotency-Key), changes nothing.
 */
import type Stripe from 'stripe';
import type { components } from '../../generated/openapi.js';
import { uuidv5 } from '../lib/ids.js';
import { livemodeOf } from '../merchants/livemode.js';
import { NO_PAUSE_POLICY } from '../pause-policy/pause-policy.rules.js';
import type { LifecycleService } from '../subscriptions/lifecycle.js';
import { ExternalIdInUseError } from '../subscriptions/subscriptions.errors.js';
import type { ChangeCause, Subscription } from '../subscriptions/subscriptions.rules.js';
import type { SubscriptionsService } from '../subscriptions/subscriptions.service.js';
import { BillingConnectionNotFoundError } from './billing.errors.js';
import type { BillingPushesRepository } from './billing-pushes.repository.js';
import type { StripeConnectionsService } from './stripe-connections.service.js';
import type { StripeEventsRepository } from './stripe-events.repository.js';
import { verifiedEvent } from './stripe.client.js';

export type StripeEventReceipt = components['schemas']['StripeEventReceipt'];
type Outcome = StripeEventReceipt['outcome'];

/** The namespace of the plan ids made from Stripe price ids (docs/billing.md): the same price always gives the same planId. */
export const STRIPE_PRICE_NAMESPACE = '7c2e4b1a-9f3d-5e8c-a6b0-4d1f2e3c5a7b';

/** The planId of a Stripe price. */
export const planIdOfPrice = (priceId: string) => uuidv5(priceId, STRIPE_PRICE_NAMESPACE);

const SUBSCRIPTION_EVENTS = new Set(['customer.subscription.created', 'customer.subscription.updated', 'customer.subscription.deleted']);
/** The Stripe statuses of a subscription that has ended: cancelled here. */
export const ENDED_STATUSES: ReadonlySet<string> = new Set(['canceled', 'incomplete_expired']);

/** What a Stripe subscription says, as the service mirrors it. */
interface Mirrored {
  readonly stripeId: string;
  readonly cancelled: boolean;
  readonly priceId: string | undefined;
  readonly paused: boolean;
}

function mirroredOf(event: Stripe.Event): Mirrored {
  const sub = event.data.object as Stripe.Subscription;
  return {
    stripeId: sub.id,
    cancelled: event.type === 'customer.subscription.deleted' || ENDED_STATUSES.has(sub.status),
    priceId: sub.items?.data?.[0]?.price?.id,
    paused: sub.pause_collection !== null && sub.pause_collection !== undefined,
  };
}

export class StripeEventsService {
  constructor(
    private readonly connections: Pick<StripeConnectionsService, 'forEvents'>,
    private readonly lifecycle: Pick<LifecycleService, 'create' | 'update' | 'cancel' | 'findByExternalId'>,
    private readonly subscriptions: Pick<SubscriptionsService, 'apply'>,
    private readonly applied: StripeEventsRepository,
    private readonly pushes: Pick<BillingPushesRepository, 'isOurs'>,
  ) {}

  /** Checks the signature, then applies the event: what it did. */
  async receive(connectionId: string, body: string, signature: string | undefined): Promise<StripeEventReceipt> {
    const connection = await this.connections.forEvents(connectionId);
    if (!connection) throw new BillingConnectionNotFoundError(`No stripe connection ${connectionId.slice(0, 100)}`);
    const event = verifiedEvent(body, signature, connection.webhookSecret);
    const outcome = await this.outcomeOf(connection, event);
    return { received: true, outcome, livemode: livemodeOf(connection.merchantId) };
  }

  private async outcomeOf(connection: { connectionId: string; merchantId: string }, event: Stripe.Event): Promise<Outcome> {
    if (!SUBSCRIPTION_EVENTS.has(event.type)) return 'ignored';
    const { merchantId } = connection;
    if (await this.applied.wasApplied(connection.connectionId, event.id)) return 'duplicate';
    const mirrored = mirroredOf(event);
    if (await this.applied.newerApplied(merchantId, mirrored.stripeId, event.created)) return 'stale';
    const echoOf = event.request?.idempotency_key;
    const echo = typeof echoOf === 'string' && (await this.pushes.isOurs(merchantId, echoOf));
    const outcome = echo ? 'echo' : await this.apply(merchantId, mirrored, { kind: 'billing', system: 'stripe', eventId: event.id });
    await this.applied.recordApplied(connection, event.id, mirrored.stripeId, event.created);
    return outcome;
  }

  private async apply(merchantId: string, mirrored: Mirrored, cause: ChangeCause): Promise<Outcome> {
    const existing = await this.lifecycle.findByExternalId(merchantId, mirrored.stripeId);
    if (mirrored.cancelled) {
      if (!existing) return 'ignored';
      await this.lifecycle.cancel({ merchantId, id: existing.id, cause });
      return 'applied';
    }
    if (mirrored.priceId === undefined) return 'ignored';
    const current = await this.upserted(merchantId, existing, { ...mirrored, priceId: mirrored.priceId }, cause);
    // Only a change of status is applied: Stripe saying what is already so changes nothing (a held pause stays the hold's).
    if (mirrored.paused && current.status === 'fulfilled')
      await this.subscriptions.apply(merchantId, current.id, 'PAUSE', { cause, policyInstead: NO_PAUSE_POLICY });
    else if (!mirrored.paused && current.status === 'paused') await this.subscriptions.apply(merchantId, current.id, 'RESUME', { cause });
    return 'applied';
  }

  /** The subscription of this Stripe subscription, created or given Stripe's price as its plan. */
  private async upserted(
    merchantId: string,
    existing: Subscription | undefined,
    { stripeId, priceId }: Mirrored & { readonly priceId: string },
    cause: ChangeCause,
  ): Promise<Subscription> {
    const planId = planIdOfPrice(priceId);
    const metadata = { stripePriceId: priceId };
    if (!existing) {
      try {
        return await this.lifecycle.create({ merchantId, subscription: { externalId: stripeId, planId, metadata }, cause });
      } catch (error) {
        // Another delivery about the same subscription created it meanwhile: update that one.
        if (!(error instanceof ExternalIdInUseError)) throw error;
        existing = await this.lifecycle.findByExternalId(merchantId, stripeId);
        if (!existing) throw error;
      }
    }
    if (existing.planId === planId && existing.metadata?.stripePriceId === priceId) return existing;
    return this.lifecycle.update({ merchantId, id: existing.id, patch: { planId, metadata }, cause });
  }
}
