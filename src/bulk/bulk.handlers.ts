/** Thin handlers for following bulk requests: a request's status, its items, and the merchant's list. */
import { pageRequestOf, type Handlers } from '../request-context/request-context.js';
import type { BulkStatusService } from './bulk.status.js';

export function bulkRequestHandlers(status: BulkStatusService): Pick<Handlers, 'getBulkRequest' | 'listBulkRequestItems' | 'listBulkRequests'> {
  return {
    getBulkRequest: async ({ merchant, params }) => ({ status: 200, body: await status.get(merchant.id, params.requestId) }),
    listBulkRequestItems: async ({ merchant, params, query }) => ({
      status: 200,
      body: await status.items(merchant.id, params.requestId, query.outcome, pageRequestOf(query)),
    }),
    listBulkRequests: async ({ merchant, query }) => ({ status: 200, body: await status.list(merchant.id, pageRequestOf(query)) }),
  };
}
