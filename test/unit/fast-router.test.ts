/** The precompiled router (src/http/fast-router.ts) routes every request exactly as openapi-backend's own router does. */
import { OpenAPIRouter } from 'openapi-backend';
import { describe, expect, it } from 'vitest';
import { PrecompiledRouter } from '../../src/http/fast-router.js';
import { loadSpec } from '../../src/lib/spec.js';

const METHODS = ['get', 'post', 'patch', 'delete', 'put', 'head', 'options'];

function outcome(router: OpenAPIRouter, method: string, path: string, strict: boolean): string {
  try {
    return router.matchOperation({ method, path, headers: {} }, strict)?.operationId ?? 'none';
  } catch (error) {
    return (error as Error).message;
  }
}

describe('the precompiled router', () => {
  const definition = loadSpec();
  const theirs = new OpenAPIRouter({ definition });
  const ours = new PrecompiledRouter({ definition });
  const id = '6f1c2a4e-3b7d-4c8e-9f0a-1b2c3d4e5f60';
  const paths = [
    ...Object.keys(definition.paths ?? {}).map((template) => template.replace(/\{[^}]+\}/g, id)),
    // Literal paths that templates also match: the more specific wins (bulk/pause is no subscription id).
    '/v2/subscriptions/bulk/pause',
    '/v2/subscriptions/bulk',
    '/v2/subscriptions/bulk/resume/',
    '/v2/subscriptions/',
    `/v2/subscriptions/${id}/pause/`,
    `/v2/subscriptions/${id}/other`,
    '/v2/subscriptions/a.b/pause',
    '/v2/events/x/resend',
    '/v2',
    '/',
    '',
    '/v3/subscriptions',
    `/v2/subscriptions/${id}/pause?x=1`,
    '/V2/SUBSCRIPTIONS',
  ];

  it('answers every method on every path of the spec, and on paths near them, with the same operation, 404 or 405', () => {
    const cases = paths.flatMap((path) => METHODS.flatMap((method) => [true, false].map((strict) => [method, path, strict] as const)));
    const differences = cases.filter(
      ([method, path, strict]) => outcome(ours, method, path, strict) !== outcome(theirs, method, path, strict),
    );
    expect(differences).toEqual([]);
    // The comparison covers all three kinds of answer.
    const answers = new Set(cases.map(([method, path, strict]) => outcome(ours, method, path, strict).split(':')[0]));
    expect([...answers]).toEqual(
      expect.arrayContaining(['pauseSubscription', 'bulkPauseSubscriptions', '404-notFound', '405-methodNotAllowed', 'none']),
    );
  });

  it('lists the same operations and finds each by its id as before', () => {
    expect(ours.getOperations()).toEqual(theirs.getOperations());
    for (const { operationId } of theirs.getOperations())
      expect(ours.getOperation(operationId!)).toEqual(theirs.getOperation(operationId!));
    expect(ours.getOperation('noSuchOperation')).toBeUndefined();
  });

  it('routes under another api root as the library does', () => {
    const rooted = { definition, apiRoot: '/api/' };
    const [mine, library] = [new PrecompiledRouter(rooted), new OpenAPIRouter(rooted)];
    const near = [
      '/api/v2/subscriptions',
      '/api',
      '/api/',
      '/apiv2/subscriptions',
      '/v2/subscriptions',
      `/api/v2/subscriptions/${id}/pause/`,
    ];
    for (const path of near)
      for (const method of METHODS)
        for (const strict of [true, false]) {
          expect(`${method} ${path} ${strict}: ${outcome(mine, method, path, strict)}`).toBe(
            `${method} ${path} ${strict}: ${outcome(library, method, path, strict)}`,
          );
        }
  });

  it("parses every operation's request as the library does, before routing, after it and again to validate it", () => {
    const headers = { 'x-api-key': 'sk_test_x', 'content-type': 'application/json', cookie: 'a=1; b=2', 'idempotency-key': 'k1' };
    const body = { subscriptions: [id], pauseAt: '2030-01-01T00:00:00.000000Z' };
    for (const operation of theirs.getOperations()) {
      // Each parameter gets a value of its own, one of them percent-encoded: each is decoded once.
      const path = operation.path.replace(/\{([^}]+)\}/g, (_, name: string) => `${name}%20${id}`);
      for (const query of ['', 'limit=10&status=PAUSED', 'status=ACTIVE&status=PAUSED']) {
        const req = () => ({ method: operation.method.toUpperCase(), path, query, headers, body });
        const [mine, library] = [req(), req()];
        // Each router is handed its own operation, as the backend does (the one it matched).
        const parses = (router: OpenAPIRouter, r: ReturnType<typeof req>) => {
          const routed = router.getOperation(operation.operationId!)!;
          return [router.parseRequest(r), router.parseRequest(r, routed), router.parseRequest(r, routed)];
        };
        const ourParses = parses(ours, mine);
        expect(ourParses).toEqual(parses(theirs, library));
        // Validation coerces a parse's query and parameters in place: no two parses share them.
        expect(ourParses[1]!.query).not.toBe(ourParses[2]!.query);
        expect(ourParses[1]!.params).not.toBe(ourParses[2]!.params);
      }
    }
    const pause = { method: 'post', path: '/v2/subscriptions/a%2Fb/pause', headers };
    ours.parseRequest(pause);
    expect(ours.parseRequest(pause, ours.getOperation('pauseSubscription'))).toMatchObject({ params: { subscriptionId: 'a/b' } });
  });

  it('is what the service routes and validates with', async () => {
    const { OpenApi31Backend } = await import('../../src/http/openapi.js');
    const api = await new OpenApi31Backend({ definition: loadSpec(), quick: true }).init();
    expect(api.router).toBeInstanceOf(PrecompiledRouter);
    expect(api.validator.router).toBe(api.router);
  });
});
