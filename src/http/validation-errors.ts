/**
 * Ajv's errors as the problem's `errors`: one per position (the first rule broken there; a UUID
 * breaks both `format` and `pattern`), at most ERRORS_LISTED, so that an error body stays small
 * whatever the request (unbounded, the body grows with every bad id of a bulk request).
 */
import type { ErrorObject } from 'ajv';
import type { FieldError } from '../errors.js';

export const ERRORS_LISTED = 100;

/** `{path, message}`: JSON Pointers into the body, or the part of the request. */
function fieldError(e: ErrorObject): FieldError {
  const [part, ...rest] = e.instancePath.split('/').filter(Boolean);
  const where = part === 'requestBody' ? `/${rest.join('/')}` : e.instancePath || '/';
  const property = e.keyword === 'additionalProperties' ? `: ${String(e.params.additionalProperty)}` : '';
  return { path: where, message: `${e.message ?? 'is invalid'}${property}` };
}

export interface ValidationErrors {
  /** How many positions break the contract. */
  readonly total: number;
  readonly listed: FieldError[];
}

export function validationErrors(errors: ErrorObject[] | null | undefined): ValidationErrors {
  const byPosition = new Map<string, FieldError>();
  for (const error of errors ?? []) {
    const field = fieldError(error);
    // additionalProperties errors share the position '/': each names its own property.
    const position = error.keyword === 'additionalProperties' ? `${field.path} ${field.message}` : field.path;
    if (!byPosition.has(position)) byPosition.set(position, field);
  }
  const all = [...byPosition.values()];
  return { total: all.length, listed: all.slice(0, ERRORS_LISTED) };
}
