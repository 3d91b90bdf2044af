/** Thin handlers for a merchant's plan names. */
import { pageRequestOf, type Handlers } from '../request-context/request-context.js';
import type { PlansService } from './plans.service.js';

export function planHandlers(plans: PlansService): Pick<Handlers, 'listPlans' | 'getPlan' | 'putPlan'> {
  return {
    listPlans: async ({ merchant, query }) => ({ status: 200, body: await plans.list(merchant.id, pageRequestOf(query)) }),
    getPlan: async ({ merchant, params }) => ({ status: 200, body: await plans.get(merchant.id, params.planId) }),
    putPlan: async ({ merchant, params, body }) => ({ status: 200, body: await plans.put(merchant.id, params.planId, body.name) }),
  };
}
