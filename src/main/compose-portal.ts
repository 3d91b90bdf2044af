/** The portal's part of the composition, for compose-http.ts: its services, limits and pages, from the stores and the domain. */
import type { Logger } from '../logger.js';
import { RateLimiter } from '../http/rate-limit.js';
import { portalLinkHandlers } from '../portal/portal-links.handlers.js';
import { PortalLinksService } from '../portal/portal-links.service.js';
import type { PlansService } from '../plans/plans.service.js';
import { PortalActions } from '../portal/portal.actions.js';
import { portalMiddleware, type PortalLimits } from '../portal/portal.routes.js';
import type { Stores } from './compose-stores.js';
import type { Domain } from './compose-domain.js';

/**
 * Per process (docs/api.md "Customer portal"): an address may open 60 pages at once and one a
 * second after; a link 30 at once and one every two seconds after. A customer needs a handful.
 */
export function portalLimits(): PortalLimits {
  return {
    byAddress: new RateLimiter(60, 1, { scope: 'address' }),
    byLink: new RateLimiter(30, 0.5, { scope: 'address' }),
  };
}

export function composePortal(
  stores: Pick<Stores, 'portalLinks' | 'merchants' | 'subscriptions'>,
  domain: Pick<Domain, 'subscriptions' | 'pausePolicies'>,
  plans: Pick<PlansService, 'nameOf'>,
  publicUrl: string | undefined,
  log: Logger,
) {
  const links = new PortalLinksService(stores.portalLinks, domain.subscriptions, publicUrl);
  const actions = new PortalActions({
    subscriptions: domain.subscriptions,
    policies: domain.pausePolicies,
    merchantName: async (merchantId) => (await stores.merchants.displayName(merchantId)) ?? '',
    planName: async (merchantId, planId) => (await plans.nameOf(merchantId, planId))?.name,
    pauseHistory: (merchantId, id) => stores.subscriptions.pauseHistory(merchantId, id),
  });
  return {
    handlers: portalLinkHandlers(links),
    pages: portalMiddleware({ links, actions, limits: portalLimits(), log: log.child({ component: 'portal' }) }),
  };
}
