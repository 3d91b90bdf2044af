/** Thin handlers for a merchant's pause policy (docs/design.md §11). */
import { livemodeOf } from '../merchants/livemode.js';
import { completePolicy } from './pause-policy.rules.js';
import type { Handlers } from '../request-context/request-context.js';
import type { PausePolicyService } from './pause-policy.service.js';

export function pausePolicyHandlers(policies: PausePolicyService): Pick<Handlers, 'getPausePolicy' | 'putPausePolicy'> {
  return {
    getPausePolicy: async ({ merchant }) => ({
      status: 200,
      body: { ...(await policies.get(merchant.id)), livemode: livemodeOf(merchant.id) },
    }),
    putPausePolicy: async ({ merchant, body }) => ({
      status: 200,
      body: { ...(await policies.put(merchant.id, completePolicy(body))), livemode: livemodeOf(merchant.id) },
    }),
  };
}
