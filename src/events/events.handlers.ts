/** Thin handlers for events: list, read, and send one again to the merchant's endpoints. */
import { pageRequestOf, type Handlers } from '../request-context/request-context.js';
import type { EventsService } from './events.service.js';
import type { Event } from './event.payload.js';

export interface Resender {
  /** Queues the event again to the merchant's enabled endpoints that take its type; returns how many. */
  resend(merchantId: string, event: Event): Promise<number>;
}

export function eventHandlers(events: EventsService, resender: Resender): Pick<Handlers, 'listEvents' | 'getEvent' | 'resendEvent'> {
  return {
    listEvents: async ({ merchant, query }) => ({
      status: 200,
      body: await events.list(
        merchant.id,
        { type: query.type, subscriptionId: query.subscriptionId, requestId: query.requestId },
        pageRequestOf(query),
      ),
    }),
    getEvent: async ({ merchant, params }) => ({ status: 200, body: await events.get(merchant.id, params.eventId) }),
    resendEvent: async ({ merchant, params }) => {
      const event = await events.get(merchant.id, params.eventId);
      return { status: 202, body: { eventId: event.id, queued: await resender.resend(merchant.id, event), livemode: event.livemode } };
    },
  };
}
