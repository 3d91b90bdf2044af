/** Thin handlers for following bulk requests: a request's status, its items (a page, or a CSV file), and the merchant's list. */
import { pageRequestOf, StreamedBody, type Handlers } from '../request-context/request-context.js';
import { CSV_TYPE, csvStream } from './bulk.export.js';
import type { BulkStatusService } from './bulk.status.js';

export function bulkRequestHandlers(status: BulkStatusService): Pick<Handlers, 'getBulkRequest' | 'listBulkRequestItems' | 'listBulkRequests'> {
  return {
    getBulkRequest: async ({ merchant, params }) => ({ status: 200, body: await status.get(merchant.id, params.requestId) }),
    listBulkRequestItems: async ({ merchant, params, query, accepts }) => {
      if (accepts('application/json', 'text/csv') === 'text/csv') {
        const { requestId, batches } = await status.itemBatches(merchant.id, params.requestId, query.outcome);
        const headers = { 'Content-Disposition': `attachment; filename="bulk-request-${requestId}.csv"` };
        return { status: 200, body: new StreamedBody(CSV_TYPE, await csvStream(batches)), headers };
      }
      return { status: 200, body: await status.items(merchant.id, params.requestId, query.outcome, pageRequestOf(query)) };
    },
    listBulkRequests: async ({ merchant, query }) => ({ status: 200, body: await status.list(merchant.id, pageRequestOf(query)) }),
  };
}
