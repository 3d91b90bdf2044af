/** Thin handlers for billing connections. */
import type { Handlers } from '../request-context/request-context.js';
import type { StripeConnectionsService } from './stripe-connections.service.js';

type BillingOperations = 'putStripeConnection' | 'getStripeConnection' | 'deleteStripeConnection';

export function billingHandlers(connections: StripeConnectionsService): Pick<Handlers, BillingOperations> {
  return {
    putStripeConnection: async ({ merchant, body, origin }) => ({ status: 200, body: await connections.put(merchant.id, body, origin) }),
    getStripeConnection: async ({ merchant, origin }) => ({ status: 200, body: await connections.get(merchant.id, origin) }),
    deleteStripeConnection: async ({ merchant }) => {
      await connections.remove(merchant.id);
      return { status: 204, body: undefined };
    },
  };
}
