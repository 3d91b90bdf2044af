/** Thin handlers for events: list, read, and send one again to the merchant's endpoints. */
import { operationOf, pageRequestOf, queryValue, type OperationHandlers } from '../operations/operation-context.js';
import type { EventsService } from './events.service.js';
import type { EventType } from '../subscriptions/outbox.js';
import type { Event } from './events.repository.js';

export interface Resender {
  /** Queues the event again to the merchant's enabled endpoints that take its type; returns how many. */
  resend(merchantId: string, event: Event): Promise<number>;
}

export function eventHandlers(events: EventsService, resender: Resender): Pick<OperationHandlers, 'listEvents' | 'getEvent' | 'resendEvent'> {
  return {
    listEvents: async (c, ctx) => {
      const context = operationOf(c);
      const type = queryValue(context, 'type') as EventType | undefined;
      ctx.body = await events.list(context.merchant.id, type, pageRequestOf(context));
    },
    getEvent: async (c, ctx) => {
      const { merchant, params } = operationOf(c);
      ctx.body = await events.get(merchant.id, String(params.eventId));
    },
    resendEvent: async (c, ctx) => {
      const { merchant, params } = operationOf(c);
      const event = await events.get(merchant.id, String(params.eventId));
      ctx.status = 202;
      ctx.body = { eventId: event.id, queued: await resender.resend(merchant.id, event) };
    },
  };
}
