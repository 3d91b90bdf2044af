/**
 * One request's operation inputs, worked out once and shared by http/ (which routes and
 * authenticates) and the features (which act): the merchant the API key resolved to, the spec's
 * operationId, the path parameters decoded exactly once (by the router), the query, the body, and
 * whether a pause or resume is a bulk request (docs/design.md §2). Features import this module, never
 * http/.
 */
import type { Readable } from 'node:stream';
import type { Context as KoaContext } from 'koa';
import type { Context } from 'openapi-backend';
import type { operations } from '../../generated/openapi.js';
import type { Merchant } from '../auth/auth.service.js';
import { NotAuthenticatedError } from '../auth/auth.errors.js';
import { DEFAULT_PAGE_SIZE, type PageRequest } from '../lib/pagination.js';
import { boundsItself } from '../lib/own-bound.js';

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

/** A list operation's `limit` and `startingAfter`, as the spec validated them (an integer in range; a repeated one is refused). */
export function pageRequestOf(query: { readonly limit?: string; readonly startingAfter?: string }): PageRequest {
  return { limit: query.limit === undefined ? DEFAULT_PAGE_SIZE : Number(query.limit), startingAfter: query.startingAfter };
}

/** Runs once openapi-backend has routed, authenticated and validated the request. */
export type OperationHandler = (c: Context, ctx: KoaContext) => Promise<void>;

/** A handler for every operation of the spec: one missing is a type error. */
export type OperationHandlers = { readonly [K in OperationId]: OperationHandler };

// ---- Handlers typed from the spec (generated/openapi.d.ts) ----

type Op<K extends OperationId> = operations[K];
type Nothing = Record<string, never>;
/** `X`, or {} where the spec has none (`never`, or absent). */
type OrNothing<X> = [NonNullable<X>] extends [never] ? Nothing : NonNullable<X>;

/** The JSON body of operation K as the spec validated it; {} for an operation without one, or when an optional body was not sent. */
export type BodyOf<K extends OperationId> = [NonNullable<Op<K>['requestBody']>] extends [never]
  ? Nothing
  : NonNullable<Op<K>['requestBody']> extends { content: { 'application/json': infer B } }
    ? B
    : NonNullable<Op<K>['requestBody']> extends { content: { 'application/merge-patch+json': infer P } }
      ? P
      : Nothing;

/** Operation K's path parameters, percent-decoded exactly once (by the router). */
export type ParamsOf<K extends OperationId> = OrNothing<Op<K>['parameters']['path']>;

/**
 * Operation K's query parameters, as they arrive: the spec validated each (a repeated one is
 * refused), so a string-typed one (an enum) has its spec type, and others (`limit`) are the
 * string the spec checked.
 */
export type QueryOf<K extends OperationId> = {
  readonly [P in keyof OrNothing<Op<K>['parameters']['query']>]?: Exclude<
    OrNothing<Op<K>['parameters']['query']>[P],
    undefined
  > extends string
    ? Exclude<OrNothing<Op<K>['parameters']['query']>[P], undefined>
    : string;
};

/**
 * A body written to the client as it is produced (a file export), for a success that the spec
 * gives a media type besides JSON: never built whole in memory.
 */
export class StreamedBody {
  constructor(
    readonly contentType: string,
    readonly stream: Readable,
  ) {}
}

type Responses<K extends OperationId> = Op<K>['responses'];
/** The statuses a handler answers with: the operation's success responses. */
export type SuccessStatus<K extends OperationId> = Extract<keyof Responses<K>, 200 | 201 | 202 | 204>;
type ResponseBody<K extends OperationId, S extends keyof Responses<K>> = Responses<K>[S] extends {
  content: { 'application/json': infer B };
}
  ? B
  : undefined;
/** StreamedBody where the spec gives the response another media type than JSON; never otherwise. */
type OtherBody<K extends OperationId, S extends keyof Responses<K>> = Responses<K>[S] extends { content: infer C }
  ? Exclude<keyof C, 'application/json'> extends never
    ? never
    : StreamedBody
  : never;

/** What a handler answers: one of the operation's success statuses, with the body the spec gives it. */
export type Reply<K extends OperationId> = {
  [S in SuccessStatus<K>]: {
    readonly status: S;
    readonly body: ResponseBody<K, S> | OtherBody<K, S>;
    readonly headers?: Readonly<Record<string, string>>;
  };
}[SuccessStatus<K>];

/** One request to operation K, routed, authenticated and validated. */
export interface Request<K extends OperationId> {
  readonly operationId: K;
  readonly merchant: Merchant;
  readonly params: ParamsOf<K>;
  readonly query: QueryOf<K>;
  readonly body: BodyOf<K>;
  /** Runs once the response has been sent (or the connection closed): nothing it starts can come before the answer. */
  afterResponse(callback: () => void): void;
  /** Which of these media types the request's `Accept` prefers (the first when it names none); false when it takes none of them. */
  readonly accepts: (...types: string[]) => string | false;
  /** The origin the request was sent to (`http://host:port`; behind TRUSTED_PROXIES, as they forward it). */
  readonly origin: string;
  /**
   * The body as it arrives, for an operation that streams it (an import's file): unread by the body
   * middleware. Taking it takes the request out of REQUEST_TIMEOUT_MS: its reader bounds the time
   * between its bytes instead, and the connection closes once it is answered.
   */
  readonly bodyStream: Readable;
  /** The request's media type, without its parameters. */
  readonly contentType: string;
  /** The JSON body's text exactly as it arrived (a signed body's signature is over it); '' when none was parsed. */
  readonly rawBody: string;
  /** A request header (any case); the first value when it was sent more than once. */
  readonly header: (name: string) => string | undefined;
}

/** A handler of operation K: the typed request in, the typed reply out. */
export type Handler<K extends OperationId> = (request: Request<K>) => Promise<Reply<K>>;

/** A typed handler for every operation of the spec. */
export type Handlers = { readonly [K in OperationId]: Handler<K> };

const JSON_TYPE = 'application/json; charset=utf-8';

/** The handler openapi-backend calls: builds the typed request, writes the reply. */
export function operationHandler<K extends OperationId>(handler: Handler<K>): OperationHandler {
  return async (c, ctx) => {
    const context = operationOf(c);
    const reply = await handler({
      operationId: context.operationId as K,
      get merchant() {
        return context.merchant;
      },
      params: context.params as ParamsOf<K>,
      query: context.query as QueryOf<K>,
      body: context.body as BodyOf<K>,
      afterResponse: (callback) => void ctx.res.once('close', callback),
      accepts: (...types) => ctx.accepts(...types),
      origin: `${ctx.protocol}://${ctx.host}`,
      get bodyStream() {
        boundsItself(ctx.req.socket);
        ctx.set('Connection', 'close');
        return ctx.req;
      },
      // Read when asked: the media type of a request that has a body.
      get contentType() {
        return ctx.request.type;
      },
      get rawBody() {
        return (ctx.request as { rawBody?: string }).rawBody ?? '';
      },
      header: (name) => context.header(name),
    });
    ctx.status = reply.status;
    if (reply.body instanceof StreamedBody) {
      // Koa pipes the stream to the socket and destroys the socket if the stream fails part way.
      ctx.set('Content-Type', reply.body.contentType);
      ctx.body = reply.body.stream;
    } else if (reply.body !== undefined) {
      // The type Koa would give a JSON body, set as it is: Koa would look 'json' up in mime-types on every answer.
      ctx.set('Content-Type', JSON_TYPE);
      ctx.body = reply.body;
    }
    for (const [name, value] of Object.entries(reply.headers ?? {})) ctx.set(name, value);
  };
}

/** openapi-backend's handlers for a set of typed ones. */
export function operationHandlers<K extends OperationId>(handlers: { readonly [P in K]: Handler<P> }): {
  readonly [P in K]: OperationHandler;
} {
  return Object.fromEntries(Object.entries(handlers).map(([id, handler]) => [id, operationHandler(handler as Handler<K>)])) as {
    [P in K]: OperationHandler;
  };
}

/** The merchant the request's API key resolved to (set by the security handler). */
export function merchantOf(c: Context): Merchant {
  const merchant = c.security?.ApiKey as Merchant | undefined;
  if (!merchant) throw new NotAuthenticatedError('A valid API key is required in the x-api-key header.');
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
    // openapi-backend types a parsed request's headers as any.
    const value = (request.headers as Record<string, string | string[] | undefined>)[name.toLowerCase()];
    return Array.isArray(value) ? value[0] : value;
  };
  return Object.freeze({
    operationId: c.operation.operationId as OperationId,
    // Read when asked: an operation without security (a billing system's event) has no merchant.
    get merchant() {
      return merchantOf(c);
    },
    params,
    query: request.query as Record<string, string | string[]>,
    body,
    subscriptionId: params.subscriptionId,
    bulkIds: Array.isArray(body.subscriptions) ? (body.subscriptions as string[]) : undefined,
    header,
  });
}
