/** Reading the merchant's events: a page of them, newest first, or one. */
import { Problems, ProblemError } from '../errors.js';
import type { Page, PageRequest } from '../lib/pagination.js';
import type { Event, EventsRepository } from './events.repository.js';
import type { EventType } from '../subscriptions/outbox.js';

export class EventsService {
  constructor(private readonly repository: EventsRepository) {}

  list(merchantId: string, type: EventType | undefined, page: PageRequest): Promise<Page<Event>> {
    return this.repository.page(merchantId, type, { ...page, startingAfter: page.startingAfter?.toLowerCase() });
  }

  /** The event, or 404 0024 for an unknown or another merchant's id. */
  async get(merchantId: string, eventId: string): Promise<Event> {
    const event = await this.repository.find(merchantId, eventId.toLowerCase());
    if (!event) throw new ProblemError(Problems.eventNotFound, `Event ${eventId} not found`);
    return event;
  }
}
