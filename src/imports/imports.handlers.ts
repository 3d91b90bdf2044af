/** Thin handlers of imports (imports.service.ts): accept a file, read an import, list its rows. */
import { DEFAULT_PAGE_SIZE } from '../lib/pagination.js';
import { StreamedBody, type Handlers } from '../request-context/request-context.js';
import type { ImportsService } from './imports.service.js';

const CSV_TYPE = 'text/csv; charset=utf-8';

export function importHandlers(
  imports: ImportsService,
): Pick<Handlers, 'createSubscriptionImport' | 'getSubscriptionImport' | 'listSubscriptionImportRows'> {
  return {
    createSubscriptionImport: async ({ merchant, query, bodyStream, contentType }) => {
      const doc = await imports.accept({
        merchantId: merchant.id,
        apiKeyId: merchant.apiKeyId,
        format: contentType === 'text/csv' ? 'csv' : 'ndjson',
        events: query.events === 'all',
        body: bodyStream,
      });
      const body = {
        id: doc._id,
        state: 'queued' as const,
        createdAt: doc.createdAt,
        livemode: (await imports.get(merchant.id, doc._id)).livemode,
      };
      return { status: 202, body, headers: { Location: `/v2/subscription-imports/${doc._id}` } };
    },
    getSubscriptionImport: async ({ merchant, params }) => ({ status: 200, body: await imports.get(merchant.id, params.importId) }),
    listSubscriptionImportRows: async ({ merchant, params, query, accepts }) => {
      if (accepts('application/json', 'text/csv') === 'text/csv') {
        const headers = { 'Content-Disposition': `attachment; filename="subscription-import-${params.importId}.csv"` };
        return {
          status: 200,
          body: new StreamedBody(CSV_TYPE, await imports.rowsCsv(merchant.id, params.importId, query.outcome)),
          headers,
        };
      }
      const limit = query.limit === undefined ? DEFAULT_PAGE_SIZE : Number(query.limit);
      const after = query.startingAfter === undefined ? 0 : Number(query.startingAfter);
      return { status: 200, body: await imports.rows(merchant.id, params.importId, query.outcome, limit, after) };
    },
  };
}
