/** The analytics operations' errors. */
import { DomainError } from '../errors.js';

/** A pause analytics range out of order or longer than the longest allowed (0140). */
export class InvalidAnalyticsRangeError extends DomainError {
  constructor(field: 'from' | 'to', rule: string) {
    super(`${field} ${rule}.`, [{ path: `/${field}`, message: rule }]);
  }
}
