/** Thin handlers of the hold operations (a hold pauses a whole store, docs/api.md "Holds"): each hold's bulk request is dispatched once its 202 is sent, like any. */
import type { Clock } from '../lib/clock.js';
import { pageRequestOf, type Handlers } from '../request-context/request-context.js';
import type { HoldsService } from './holds.service.js';

export function holdHandlers(
  holds: HoldsService,
  clockOf: (merchantId: string) => Promise<Clock>,
): Pick<Handlers, 'createHold' | 'listHolds' | 'getHold' | 'releaseHold'> {
  return {
    createHold: async (request) => {
      const { merchant, body } = request;
      const hold = await holds.place(merchant.id, body, await clockOf(merchant.id));
      request.afterResponse(() => holds.dispatch(merchant.id, hold.requestId));
      return { status: 202, body: hold, headers: { Location: `/v2/holds/${hold.id}` } };
    },
    listHolds: async ({ merchant, query }) => ({ status: 200, body: await holds.list(merchant.id, pageRequestOf(query)) }),
    getHold: async ({ merchant, params }) => ({ status: 200, body: await holds.get(merchant.id, params.holdId) }),
    releaseHold: async (request) => {
      const { merchant, params } = request;
      const hold = await holds.release(merchant.id, params.holdId, (await clockOf(merchant.id)).timestamp());
      request.afterResponse(() => holds.dispatch(merchant.id, hold.releaseRequestId!));
      return { status: 202, body: hold };
    },
  };
}
