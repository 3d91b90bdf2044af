/**
 * Thin handlers for bulk requests beside their acceptance (src/subscriptions/subscriptions.handlers.ts):
 * a preview of what one would do, a request's status, its items (a page, or a CSV file), the
 * merchant's list, and an undo.
 */
import type { Clock } from '../lib/clock.js';
import { pageRequestOf, StreamedBody, type Handlers } from '../request-context/request-context.js';
import { selectionOf } from '../subscriptions/bulk.selection.js';
import type { BulkAcceptor } from '../subscriptions/bulk.selection.js';
import { scheduleRequestOf } from '../subscriptions/schedule.request.js';
import { CSV_TYPE, csvStream } from './bulk.export.js';
import type { BulkStatusService } from './bulk.status.js';
import type { BulkUndoService } from './bulk.undo.js';

export function bulkRequestHandlers(
  status: BulkStatusService,
): Pick<Handlers, 'getBulkRequest' | 'listBulkRequestItems' | 'listBulkRequests'> {
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

/**
 * `/bulk/pause/preview` and `/bulk/resume/preview`: the bulk operation's dry run (docs/design.md §6a),
 * with nothing stored. A pause's schedule is checked as the bulk pause checks it, against the
 * merchant's clock (a test key's may stand ahead), since the pause policy is counted with it.
 */
export function bulkPreviewHandlers(
  bulk: Pick<BulkAcceptor, 'dryRun'>,
  clockOf: (merchantId: string) => Promise<Clock>,
): Pick<Handlers, 'previewBulkPause' | 'previewBulkResume'> {
  return {
    previewBulkPause: async ({ merchant, body }) => {
      const schedule = scheduleRequestOf(body, await clockOf(merchant.id));
      return { status: 200, body: await bulk.dryRun(merchant.id, 'PAUSE', selectionOf(body), schedule) };
    },
    previewBulkResume: async ({ merchant, body }) => ({ status: 200, body: await bulk.dryRun(merchant.id, 'RESUME', selectionOf(body)) }),
  };
}

/** `POST /v2/bulk-requests/{requestId}/undo`: a new bulk request, dispatched to the workers once its 202 is sent, like any. */
export function bulkUndoHandlers(undos: BulkUndoService, bulk: Pick<BulkAcceptor, 'dispatch'>): Pick<Handlers, 'undoBulkRequest'> {
  return {
    undoBulkRequest: async (request) => {
      const { merchant, params } = request;
      const acceptance = await undos.undo(merchant.id, params.requestId, merchant.apiKeyId);
      request.afterResponse(() => bulk.dispatch(merchant.id, acceptance.requestId));
      return { status: 202, body: acceptance, headers: { Location: `/v2/bulk-requests/${acceptance.requestId}` } };
    },
  };
}
