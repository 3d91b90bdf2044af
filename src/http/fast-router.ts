/**
 * openapi-backend's router, made cheap per request. As shipped (5.21), every request rebuilds the
 * list of all operations from the definition with lodash, twice, and compiles a RegExp for every
 * path template, a large share of a single pause's CPU under `npm run bench` (c)
 * (docs/performance.md#the-figures-behind-the-codes-choices). The definition never
 * changes after `init()`, so the list and the patterns are built once; the rules stay the router's
 * own (exact path first, then templates, the most specific first, 404 or 405 when `strict`).
 *
 * A subclass that overrides public methods only (getOperations, getOperation, matchOperation),
 * installed through the backend's public `router` and `validator.router` fields: no private
 * member is called or replaced, so a release that changes those signatures fails the type check,
 * and test/unit/fast-router.test.ts compares every path and method with the library's own router.
 */
import { OpenAPIRouter, type Document, type Operation, type ParsedRequest, type Request } from 'openapi-backend';

interface Template {
  readonly operation: Operation;
  readonly pattern: RegExp;
  /** The router's specificity: the length of the path without its parameters. */
  readonly literalLength: number;
}

const escapeRegExp = (literal: string) => literal.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const PARAMETER = /\{([A-Za-z0-9_-]+)\}/g;

/**
 * An operation's path parameters, read as the router's `parseRequest` reads them (bath-es5: each
 * segment percent-decoded once, {} when the path does not fit or names one parameter twice with
 * two values), from a pattern built once rather than on every request.
 */
function parameterReader(template: string): (path: string) => Record<string, string> {
  const names = [...template.matchAll(PARAMETER)].map((m) => m[1]!);
  if (names.length === 0) return () => ({});
  const pattern = new RegExp(
    `^${template
      .split(PARAMETER)
      .filter((_, i) => i % 2 === 0)
      .map(escapeRegExp)
      .join('([^/]*)')}$`,
  );
  return (path) => {
    const match = pattern.exec(path);
    const params: Record<string, string> = {};
    if (!match) return params;
    for (let i = 0; i < names.length; i++) {
      const [name, value] = [names[i]!, decodeURIComponent(match[i + 1]!)];
      if (name in params && params[name] !== value) return {};
      params[name] = value;
    }
    return params;
  };
}

/** A query parameter whose value the router reworks once the operation is known (JSON content, a non-exploded list). */
const reworksQuery = (operation: Operation) =>
  (operation.parameters ?? []).some(
    (p) => !('$ref' in p) && p.in === 'query' && (p.content?.['application/json'] !== undefined || p.explode === false),
  );

/** What `parseRequest` worked out of a request before routing, reused once it is routed. */
type Unrouted = Omit<ParsedRequest, 'params'>;

export class PrecompiledRouter extends OpenAPIRouter {
  private readonly operations: Operation[];
  private readonly byId: Map<string, Operation>;
  private readonly templates: Template[];
  /** The api root without its trailing slash ('' for '/'): a path is under it at a segment boundary. */
  private readonly root: string;
  private readonly parameters: Map<Operation, (path: string) => Record<string, string>>;
  /** Each request's parse before routing (headers, cookies, query, body), for the parses after it. */
  private readonly unrouted = new WeakMap<Request, Unrouted>();

  constructor(opts: { definition: Document; apiRoot?: string; ignoreTrailingSlashes?: boolean }) {
    super(opts);
    this.operations = super.getOperations();
    this.byId = new Map(this.operations.filter((op) => op.operationId).map((op) => [op.operationId!, op]));
    this.templates = this.operations
      .map((operation) => ({
        operation,
        pattern: new RegExp(
          `^${operation.path
            .split(/\{[^}]+\}/)
            .map(escapeRegExp)
            .join('[^/]+')}$`,
        ),
        literalLength: operation.path.replace(/\{.*?\}/g, '').length,
      }))
      // Stable: among equally specific templates the definition's order decides, as in the router.
      .sort((a, b) => b.literalLength - a.literalLength);
    this.root = this.apiRoot.replace(/\/$/, '');
    this.parameters = new Map(this.operations.filter((op) => !reworksQuery(op)).map((op) => [op, parameterReader(op.path)]));
  }

  /**
   * openapi-backend parses a request three times: before routing, after it (with the operation's
   * path parameters) and again to validate it. The first parse's headers, cookies and body are
   * kept for the other two, which add the path parameters (from a pattern built once) and a query
   * of their own: validation coerces the query and parameters it checks in place, so each parse
   * gets its own, as in the library. An operation whose query the router reworks (none in our spec) is
   * parsed as the library does.
   */
  override parseRequest(req: Request, operation?: Operation): ParsedRequest {
    const readParameters = operation && this.parameters.get(operation);
    const before = this.unrouted.get(req);
    if (!readParameters || !before) {
      const parsed = super.parseRequest(req, operation);
      if (!operation) this.unrouted.set(req, parsed);
      return parsed;
    }
    return { ...before, query: this.parseRequestQuery(req), params: readParameters(this.normalizePath(before.path)) };
  }

  override getOperations(): Operation[] {
    return this.operations;
  }

  override getOperation(operationId: string): Operation | undefined {
    return this.byId.get(operationId);
  }

  override matchOperation(req: Request): Operation | undefined;
  override matchOperation(req: Request, strict: boolean): Operation;
  override matchOperation(request: Request, strict?: boolean): Operation | undefined {
    const req = this.normalizeRequest(request);
    const underRoot = this.root === '' ? req.path.startsWith('/') : req.path === this.root || req.path.startsWith(`${this.root}/`);
    if (!underRoot) return this.notFound(strict);
    const path = this.normalizePath(req.path);
    const exact = this.operations.find((op) => op.path === path && op.method === req.method);
    if (exact) return exact;
    // The most specific template of this method that matches; a template of another method is
    // tried only to tell 405 from 404, and only until one matches.
    let otherMethod = false;
    for (const { operation, pattern } of this.templates) {
      if (operation.method === req.method) {
        if (pattern.test(path)) return operation;
      } else if (!otherMethod) {
        otherMethod = pattern.test(path);
      }
    }
    if (!otherMethod) return this.notFound(strict);
    if (strict) throw new Error('405-methodNotAllowed: this method is not registered for the route');
    return undefined;
  }

  private notFound(strict: boolean | undefined): undefined {
    if (strict) throw new Error('404-notFound: no route matches request');
    return undefined;
  }
}
