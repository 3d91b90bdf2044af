/** The lifecycle's operations (lifecycle.ts): create, find by externalId, update, cancel. */
import type { Handlers } from '../request-context/request-context.js';
import type { LifecycleService } from './lifecycle.js';
import { subscriptionView } from './subscriptions.handlers.js';
import { causeOf } from './subscriptions.rules.js';

export function lifecycleHandlers(
  lifecycle: LifecycleService,
  list: Handlers['listSubscriptions'],
): Pick<Handlers, 'createSubscription' | 'updateSubscription' | 'cancelSubscription' | 'listSubscriptions'> {
  return {
    createSubscription: async ({ merchant, body }) => {
      const { externalId, planId, status, cycle, metadata } = body;
      const subscription = { externalId, planId, status, cycle, metadata };
      const created = await lifecycle.create({ merchantId: merchant.id, subscription, cause: causeOf(merchant) });
      return { status: 201, body: subscriptionView(created), headers: { Location: `/v2/subscriptions/${created.id}` } };
    },
    updateSubscription: async ({ merchant, params, body }) => {
      const { planId, cycle, metadata, externalId, status } = body;
      const patch = { planId, cycle, metadata, externalId, status };
      const updated = await lifecycle.update({ merchantId: merchant.id, id: params.subscriptionId, patch, cause: causeOf(merchant) });
      return { status: 200, body: subscriptionView(updated) };
    },
    cancelSubscription: async ({ merchant, params, body }) => ({
      status: 200,
      body: subscriptionView(
        await lifecycle.cancel({ merchantId: merchant.id, id: params.subscriptionId, reason: body.reason, cause: causeOf(merchant) }),
      ),
    }),
    // One subscription at most has an externalId: its page is that one, or none.
    listSubscriptions: async (request) => {
      const { externalId } = request.query;
      if (externalId === undefined) return list(request);
      const found = await lifecycle.findByExternalId(request.merchant.id, externalId);
      const data = found && (request.query.status === undefined || found.status === request.query.status) ? [subscriptionView(found)] : [];
      return { status: 200, body: { data, hasMore: false, nextCursor: null } };
    },
  };
}
