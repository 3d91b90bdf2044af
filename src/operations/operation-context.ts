/**
 * One request's operation inputs, worked out once and shared by http/ (which routes and
 * authenticates) and the features (which act): the merchant the API key resolved to, the spec's
 * operationId, the path parameters decoded exactly once (by the router), the query, the body, and
 * whether a pause or resume is a bulk request (docs/design.md §2). Features import this module, never
 * http/.
 */
import type { Context as KoaContext } from 'koa';
import type { Context } from 'openapi-backend';
import type { operations } from '../../generated/openapi.js';
import type { Merchant } from '../auth/merchants.repository.js';
import { Problems, ProblemError } from '../errors.js';
import { DEFAULT_PAGE_SIZE, type PageRequest } from '../lib/pagination.js';

export type OperationId = keyof operations;

export interface OperationContext {
  readonly operationId: OperationId;
  readonly merchant: Merchant;
  /** Path parameters, percent-decoded exactly once. */
  readonly params: Readonly<Record<string, string>>;
  readonly query: Readonly<Record<string, string | string[]>>;
  /** The JSON body as validated against the spec; `{}` when none was sent. */
  readonly body: Readonly<Record<string, unknown>>;
  /** The `{subscriptionId}` path segment (decoded once, as sent); undefined on other paths. */
  readonly subscriptionId: string | undefined;
  /** A bulk request's ids (a body with `subscriptions`); undefined for a single operation. */
  readonly bulkIds: readonly string[] | undefined;
  /** A request header; the first value when it was sent more than once. */
  header(name: string): string | undefined;
}

/** A list operation's `limit` and `startingAfter` (validated against the spec at the edge). */
export function pageRequestOf({ query }: OperationContext): PageRequest {
  const first = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);
  const limit = first(query.limit);
  return { limit: limit === undefined ? DEFAULT_PAGE_SIZE : Number(limit), startingAfter: first(query.startingAfter) };
}

/** A query parameter's value, the first one when it was sent more than once. */
export function queryValue({ query }: OperationContext, name: string): string | undefined {
  const value = query[name];
  return Array.isArray(value) ? value[0] : value;
}

/** Runs once openapi-backend has routed, authenticated and validated the request. */
export type OperationHandler = (c: Context, ctx: KoaContext) => Promise<void>;

/** A handler for every operation of the spec: one missing is a type error. */
export type OperationHandlers = { readonly [K in OperationId]: OperationHandler };

/** The merchant the request's API key resolved to (set by the security handler). */
export function merchantOf(c: Context): Merchant {
  const merchant = c.security?.ApiKey as Merchant | undefined;
  if (!merchant) throw new ProblemError(Problems.unauthorized, 'A valid API key is required in the x-api-key header.');
  return merchant;
}

const contexts = new WeakMap<Context, OperationContext>();

/** The operation context of a routed request, built on first use and the same object afterwards. */
export function operationOf(c: Context): OperationContext {
  let context = contexts.get(c);
  if (!context) {
    context = buildContext(c);
    contexts.set(c, context);
  }
  return context;
}

function buildContext(c: Context): OperationContext {
  const { request } = c;
  const body = (request.requestBody ?? {}) as Record<string, unknown>;
  const params = request.params as Record<string, string>;
  const header = (name: string) => {
    const value = request.headers[name.toLowerCase()];
    return Array.isArray(value) ? value[0] : value;
  };
  return Object.freeze({
    operationId: c.operation.operationId as OperationId,
    merchant: merchantOf(c),
    params,
    query: request.query as Record<string, string | string[]>,
    body,
    subscriptionId: params.subscriptionId,
    bulkIds: Array.isArray(body.subscriptions) ? (body.subscriptions as string[]) : undefined,
    header,
  });
}
