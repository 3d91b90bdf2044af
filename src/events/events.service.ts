/** Reading the merchant's events: a page of them, newest first, or one. */
import type { Page, PageRequest } from '../lib/pagination.js';
import { EventNotFoundError } from './events.errors.js';
import type { Event } from './event.payload.js';
import type { EventFilter, EventsRepository } from './events.repository.js';

// Where src/http/problem.middleware.ts imports it from.

export class EventsService {
  constructor(private readonly repository: EventsRepository) {}

  /** A page of the merchant's events that pass the filters; another merchant's subscription or request gives an empty one. */
  list(merchantId: string, { type, subscriptionId, requestId }: EventFilter, page: PageRequest): Promise<Page<Event>> {
    const filter = { type, subscriptionId: subscriptionId?.toLowerCase(), requestId: requestId?.toLowerCase() };
    return this.repository.page(merchantId, filter, { ...page, startingAfter: page.startingAfter?.toLowerCase() });
  }

  /** The event, or 404 0024 for an unknown or another merchant's id. */
  async get(merchantId: string, eventId: string): Promise<Event> {
    const event = await this.repository.find(merchantId, eventId.toLowerCase());
    if (!event) throw new EventNotFoundError(`Event ${eventId} not found`);
    return event;
  }
}
