/** Thin handlers for event destinations. */
import type { Handlers } from '../request-context/request-context.js';
import { pageRequestOf } from '../request-context/request-context.js';
import type { DestinationsService } from './destinations.service.js';

type DestinationOperations =
  'createEventDestination' | 'listEventDestinations' | 'getEventDestination' | 'deleteEventDestination' | 'testEventDestination';

export function destinationHandlers(destinations: DestinationsService): Pick<Handlers, DestinationOperations> {
  return {
    createEventDestination: async ({ merchant, body }) => ({ status: 201, body: await destinations.create(merchant.id, body) }),
    listEventDestinations: async ({ merchant, query }) => ({
      status: 200,
      body: await destinations.list(merchant.id, pageRequestOf(query)),
    }),
    getEventDestination: async ({ merchant, params }) => ({ status: 200, body: await destinations.get(merchant.id, params.destinationId) }),
    deleteEventDestination: async ({ merchant, params }) => {
      await destinations.delete(merchant.id, params.destinationId);
      return { status: 204, body: undefined };
    },
    testEventDestination: async ({ merchant, params }) => ({
      status: 202,
      body: await destinations.ping(merchant.id, params.destinationId),
    }),
  };
}
