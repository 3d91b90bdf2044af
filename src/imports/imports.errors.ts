/** The named errors of imports: http/problem.middleware.ts maps each to its problem. */
import { DomainError } from '../errors.js';

/** No import of the merchant has this id (404 0029). */
export class ImportNotFoundError extends DomainError {
  constructor(readonly importId: string) {
    super(`Subscription import ${importId} not found`);
  }
}

/** The file has more rows or bytes than an import takes (413 0042); nothing was imported. */
export class ImportTooLargeError extends DomainError {}

/** The client sent no byte of the file for IMPORT_IDLE_TIMEOUT_MS (408 0040); nothing was imported. */
export class ImportUploadIdleError extends DomainError {}

/** The file's first line is not a header an import reads (CSV), or the file has no row (400 0040). */
export class ImportFileRefusedError extends DomainError {}
