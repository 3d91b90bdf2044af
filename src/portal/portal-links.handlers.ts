/** Thin handlers for portal links (the pages themselves are portal.routes.ts). */
import { pageRequestOf, type Handlers } from '../request-context/request-context.js';
import type { PortalLinksService } from './portal-links.service.js';

type PortalLinkOperations = 'createPortalLink' | 'listPortalLinks' | 'revokePortalLink';

export function portalLinkHandlers(links: PortalLinksService): Pick<Handlers, PortalLinkOperations> {
  return {
    createPortalLink: async ({ merchant, params, body, origin }) => ({
      status: 201,
      body: await links.create(merchant.id, params.subscriptionId, body, origin),
    }),
    listPortalLinks: async ({ merchant, query }) => ({
      status: 200,
      body: await links.list(merchant.id, query.subscriptionId, pageRequestOf(query)),
    }),
    revokePortalLink: async ({ merchant, params }) => {
      await links.revoke(merchant.id, params.portalLinkId);
      return { status: 204, body: undefined };
    },
  };
}
