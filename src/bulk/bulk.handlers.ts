/** Thin handlers for following bulk requests: a request's status, its items, and the merchant's list. */
import type { components } from '../../generated/openapi.js';
import { operationOf, pageRequestOf, queryValue, type OperationHandlers } from '../operations/operation-context.js';
import type { BulkStatusService } from './bulk.status.js';

type Outcome = components['schemas']['CommandOutcome'];

export function bulkRequestHandlers(
  status: BulkStatusService,
): Pick<OperationHandlers, 'getBulkRequest' | 'listBulkRequestItems' | 'listBulkRequests'> {
  return {
    getBulkRequest: async (c, ctx) => {
      const { merchant, params } = operationOf(c);
      ctx.body = await status.get(merchant.id, String(params.requestId));
    },
    listBulkRequestItems: async (c, ctx) => {
      const context = operationOf(c);
      const outcome = queryValue(context, 'outcome') as Outcome | undefined;
      ctx.body = await status.items(context.merchant.id, String(context.params.requestId), outcome, pageRequestOf(context));
    },
    listBulkRequests: async (c, ctx) => {
      const context = operationOf(c);
      ctx.body = await status.list(context.merchant.id, pageRequestOf(context));
    },
  };
}
