/** Thin handlers for webhook endpoints and their deliveries. */
import type { Handlers } from '../request-context/request-context.js';
import { pageRequestOf } from '../request-context/request-context.js';
import { livemodeOf } from '../merchants/livemode.js';
import type { DeliveriesRepository } from './deliveries.repository.js';
import type { EndpointsService } from './endpoints.service.js';
import type { ReplayService } from './replay.js';

type EndpointOperations =
  | 'createWebhookEndpoint'
  | 'listWebhookEndpoints'
  | 'getWebhookEndpoint'
  | 'updateWebhookEndpoint'
  | 'deleteWebhookEndpoint'
  | 'listWebhookDeliveries'
  | 'replayWebhookEvents';

export function webhookHandlers(
  endpoints: EndpointsService,
  deliveries: DeliveriesRepository,
  replays: ReplayService,
): Pick<Handlers, EndpointOperations> {
  return {
    createWebhookEndpoint: async ({ merchant, body }) => ({ status: 201, body: await endpoints.create(merchant.id, body) }),
    listWebhookEndpoints: async ({ merchant, query }) => ({ status: 200, body: await endpoints.list(merchant.id, pageRequestOf(query)) }),
    getWebhookEndpoint: async ({ merchant, params }) => ({ status: 200, body: await endpoints.get(merchant.id, params.endpointId) }),
    updateWebhookEndpoint: async ({ merchant, params, body }) => ({
      status: 200,
      body: await endpoints.update(merchant.id, params.endpointId, body),
    }),
    deleteWebhookEndpoint: async ({ merchant, params }) => {
      await endpoints.delete(merchant.id, params.endpointId);
      return { status: 204, body: undefined };
    },
    listWebhookDeliveries: async ({ merchant, params, query }) => {
      const endpoint = await endpoints.get(merchant.id, params.endpointId);
      const page = await deliveries.page(merchant.id, endpoint.id, pageRequestOf(query));
      const shown = page.data.map(({ merchantId: _m, endpointId: _e, trace: _t, replay, ...delivery }) => ({
        ...delivery,
        replay: replay === true,
        livemode: livemodeOf(merchant.id),
      }));
      return { status: 200, body: { ...page, data: shown } };
    },
    replayWebhookEvents: async ({ merchant, params, body }) => ({
      status: 202,
      body: await replays.replay(merchant.id, params.endpointId, body),
    }),
  };
}
