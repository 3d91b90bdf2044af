/** Thin handlers for billing connections, and the events Stripe sends to one. */
import type { Handlers } from '../request-context/request-context.js';
import type { StripeConnectionsService } from './stripe-connections.service.js';
import type { StripeEventsService } from './stripe-events.service.js';
import type { StripeBackfill } from './stripe-backfill.js';
import { livemodeOf } from '../merchants/livemode.js';

type BillingOperations =
  'putStripeConnection' | 'getStripeConnection' | 'deleteStripeConnection' | 'receiveStripeEvent' | 'syncStripeConnection';

export function billingHandlers(
  connections: StripeConnectionsService,
  events: StripeEventsService,
  backfill: StripeBackfill,
): Pick<Handlers, BillingOperations> {
  return {
    putStripeConnection: async ({ merchant, body, origin }) => ({ status: 200, body: await connections.put(merchant.id, body, origin) }),
    getStripeConnection: async ({ merchant, origin }) => ({ status: 200, body: await connections.get(merchant.id, origin) }),
    deleteStripeConnection: async ({ merchant }) => {
      await connections.remove(merchant.id);
      return { status: 204, body: undefined };
    },
    syncStripeConnection: async ({ merchant }) => {
      const doc = await backfill.start(merchant.id, merchant.apiKeyId);
      const body = { id: doc._id, state: 'queued' as const, createdAt: doc.createdAt, livemode: livemodeOf(merchant.id) };
      return { status: 202, body, headers: { Location: `/v2/subscription-imports/${doc._id}` } };
    },
    receiveStripeEvent: async ({ params, rawBody, header }) => ({
      status: 200,
      body: await events.receive(params.connectionId, rawBody, header('Stripe-Signature')),
    }),
  };
}
