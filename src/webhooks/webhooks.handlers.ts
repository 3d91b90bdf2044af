/** Thin handlers for webhook endpoints and their deliveries. */
import { operationOf, pageRequestOf, type OperationHandlers } from '../operations/operation-context.js';
import type { DeliveriesRepository } from './deliveries.repository.js';
import type { EndpointChanges } from './endpoints.repository.js';
import type { EndpointsService, NewEndpoint } from './endpoints.service.js';

type EndpointOperations =
  | 'createWebhookEndpoint'
  | 'listWebhookEndpoints'
  | 'getWebhookEndpoint'
  | 'updateWebhookEndpoint'
  | 'deleteWebhookEndpoint'
  | 'listWebhookDeliveries';

export function webhookHandlers(endpoints: EndpointsService, deliveries: DeliveriesRepository): Pick<OperationHandlers, EndpointOperations> {
  return {
    createWebhookEndpoint: async (c, ctx) => {
      const { merchant, body } = operationOf(c);
      ctx.status = 201;
      ctx.body = await endpoints.create(merchant.id, body as unknown as NewEndpoint);
    },
    listWebhookEndpoints: async (c, ctx) => {
      const context = operationOf(c);
      ctx.body = await endpoints.list(context.merchant.id, pageRequestOf(context));
    },
    getWebhookEndpoint: async (c, ctx) => {
      const { merchant, params } = operationOf(c);
      ctx.body = await endpoints.get(merchant.id, String(params.endpointId));
    },
    updateWebhookEndpoint: async (c, ctx) => {
      const { merchant, params, body } = operationOf(c);
      ctx.body = await endpoints.update(merchant.id, String(params.endpointId), body as EndpointChanges);
    },
    deleteWebhookEndpoint: async (c, ctx) => {
      const { merchant, params } = operationOf(c);
      await endpoints.delete(merchant.id, String(params.endpointId));
      ctx.status = 204;
    },
    listWebhookDeliveries: async (c, ctx) => {
      const context = operationOf(c);
      const endpoint = await endpoints.get(context.merchant.id, String(context.params.endpointId));
      const page = await deliveries.page(context.merchant.id, endpoint.id, pageRequestOf(context));
      ctx.body = { ...page, data: page.data.map(({ merchantId: _m, endpointId: _e, trace: _t, ...delivery }) => delivery) };
    },
  };
}
