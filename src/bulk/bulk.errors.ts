/** What a bulk request is refused for (mapped to problems in src/http/problem.middleware.ts), and why a chunk is retried. */
import { DomainError } from '../errors.js';

/** A filter that matches more subscriptions than one bulk request takes: 400. */
export class FilterTooBroadError extends DomainError {}

/** An undo of a request whose commands do not all have an outcome yet: 409. */
export class BulkRequestNotFinishedError extends DomainError {}

/** A second undo of a request: 409, naming the undo that was made. */
export class BulkRequestAlreadyUndoneError extends DomainError {}

/** An unknown bulk request, or another merchant's: 404. */
export class BulkRequestNotFoundError extends DomainError {
  constructor(readonly requestId: string) {
    super(`Bulk request ${requestId} not found`);
  }
}

/** Thrown while some commands of a chunk are unresolved (a concurrent writer kept interfering): Agenda retries the chunk. */
export class ChunkUnresolvedError extends Error {
  override name = 'ChunkUnresolvedError';
}
