/** The portal's refusals through the API, each mapped to its catalogue entry by src/http/problem.middleware.ts. */
import { DomainError } from '../errors.js';

/** No portal link of the caller has this id, or it was revoked (404 0027). */
export class PortalLinkNotFoundError extends DomainError {}

/** A cancelled subscription never changes, so it gets no link (409 0030). */
export class PortalSubscriptionCancelledError extends DomainError {}

/** A form the customers' page cannot read: not sent as a form (415), or too large (413). */
export class FormRefused extends Error {
  constructor(
    readonly status: 413 | 415,
    readonly reason: string,
  ) {
    super(reason);
  }
}
