/** A subscription's reads show where it stands with the billing system (`billingSync`), once a change of it was pushed. */
import type { Handlers } from '../request-context/request-context.js';
import type { BillingSyncRepository } from './billing-sync.repository.js';

type Reads = Pick<Handlers, 'getSubscription' | 'listSubscriptions'>;

export function withBillingSync<R extends Reads>(reads: R, sync: Pick<BillingSyncRepository, 'of'>): R {
  return {
    ...reads,
    getSubscription: async (request) => {
      const reply = await reads.getSubscription(request);
      const state = (await sync.of(request.merchant.id, [reply.body.id])).get(reply.body.id);
      return state ? { ...reply, body: { ...reply.body, billingSync: state } } : reply;
    },
    listSubscriptions: async (request) => {
      const reply = await reads.listSubscriptions(request);
      const states = await sync.of(
        request.merchant.id,
        reply.body.data.map((s) => s.id),
      );
      if (states.size === 0) return reply;
      const data = reply.body.data.map((s) => (states.has(s.id) ? { ...s, billingSync: states.get(s.id)! } : s));
      return { ...reply, body: { ...reply.body, data } };
    },
  };
}
