/**
 * The spec's bounds are the service's (issue 45): for every bounded field of every request, a value
 * at the bound passes and one past it answers 400 0040 (0043 for a schedule field, docs/design.md
 * §9), naming the field. The cases are made by walking the spec's parameters and JSON bodies, so a
 * field added to the spec is covered without a change here; a field whose kind of value this file
 * cannot make fails its case, saying so.
 *
 * Every answer also carries the rate-limit fields the spec declares on every 2xx and 4xx, in the
 * declared form: the merchant's quota once the key is accepted, the address's before (401, 413, 415).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSpec } from '../../src/lib/spec.js';
import { SCHEDULE_FIELDS } from '../../src/subscriptions/schedule.request.js';
import { contractViolations } from '../support/contract.js';
import { call, type Reply } from '../support/http.js';
import { rawExchange } from '../support/raw-http.js';
import { startTestService, type TestService } from '../support/service.js';

type Schema = Record<string, any>;
const spec = loadSpec() as any;
const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

/** The object a local `$ref` points to, followed until it is not a reference. */
function resolved<T extends Schema>(node: T): T {
  let current: Schema = node;
  while (current?.$ref)
    current = current.$ref
      .slice(2)
      .split('/')
      .reduce((at: Schema, key: string) => at[key], spec);
  return current as T;
}

/** A schema's branch that is not `null`: `oneOf: [X, {type: 'null'}]` and `type: [X, 'null']` alike. */
function nonNull(schema: Schema): Schema {
  const own = resolved(schema);
  const branch = own.oneOf?.map(resolved).find((s: Schema) => s.type !== 'null');
  return branch ? { ...branch, ...Object.fromEntries(Object.entries(own).filter(([k]) => k !== 'oneOf')) } : own;
}

interface Bound {
  readonly keyword: 'maxLength' | 'minLength' | 'maximum' | 'minimum' | 'maxItems' | 'minItems';
  readonly at: number;
  readonly past: number;
}

function boundsOf(schema: Schema, where: 'path' | 'query' | 'header' | 'body'): Bound[] {
  const bounds: Bound[] = [];
  const add = (keyword: Bound['keyword'], value: number | undefined, step: 1 | -1) => {
    if (value !== undefined) bounds.push({ keyword, at: value, past: value + step });
  };
  if (schema.type === 'string' || schema.type?.includes?.('string')) {
    add('maxLength', schema.maxLength, 1);
    // An empty path segment or header is not sent as one: the lower bound is for bodies and queries.
    if (schema.minLength > 0 && (where === 'body' || where === 'query')) add('minLength', schema.minLength, -1);
  }
  if (schema.type === 'integer' || schema.type?.includes?.('integer')) {
    add('maximum', schema.maximum, 1);
    add('minimum', schema.minimum, -1);
  }
  if (schema.type === 'array') {
    add('maxItems', schema.maxItems, 1);
    if (schema.minItems > 0) add('minItems', schema.minItems, -1);
  }
  return bounds;
}

/** A date-time at `length` characters: `daysAhead` days from now, its fraction padded with digits. */
function dateTime(length: number, daysAhead: number): string {
  const base = new Date(Date.now() + daysAhead * 86_400_000).toISOString().slice(0, 20);
  return `${base}${'0'.repeat(Math.max(1, length - base.length - 1))}Z`;
}

/** A string of the schema's kind, `length` characters long. */
function stringOf(schema: Schema, length: number, name: string): string {
  if (schema.format === 'uuid') return (randomUUID() + randomUUID()).slice(0, length);
  if (schema.format === 'date-time') return dateTime(length, name === 'createdAt' || name.startsWith('created') ? -30 : 30);
  if (schema.pattern === '^[hH][tT][tT][pP][sS]?://') return `https://example.com/${'a'.repeat(length - 20)}`;
  if (schema.pattern === '^[\\x21-\\x7E]+$') return `k${randomUUID()}`.padEnd(length, 'k').slice(0, length);
  if (schema.pattern === undefined && schema.format === undefined) return 'a'.repeat(length);
  // A date at its ten characters (yesterday), or one character past them.
  if (schema.format === 'date') return new Date(Date.now() - 86_400_000).toISOString().slice(0, 10).padEnd(length, '0');
  // A Stripe key or webhook secret (their own prefixes), a Kafka broker address and topic.
  if (schema.pattern === '^(sk|rk)_(test|live)_[0-9A-Za-z]{8,200}$') return `sk_test_${'a'.repeat(length - 8)}`;
  if (schema.pattern === '^whsec_[0-9A-Za-z+/=]{8,200}$') return `whsec_${'a'.repeat(length - 6)}`;
  if (schema.pattern === '^[A-Za-z0-9.\\-]{1,253}:[0-9]{1,5}$') return `${'b'.repeat(Math.max(1, length - 5))}:9092`;
  if (schema.pattern === '^(?!\\.{1,2}$)[A-Za-z0-9._-]{1,249}$') return 't'.repeat(length);
  // An import's row cursor: a line number.
  if (schema.pattern === '^[0-9]{1,7}$') return '1'.repeat(length);
  throw new Error(`${name}: no value of this kind (format ${schema.format}, pattern ${schema.pattern}) can be made here; teach stringOf`);
}

/** A value of the schema at the bound's edge (`count` characters, items or the number itself). */
function valueOf(schema: Schema, count: number, name: string): unknown {
  if (schema.type === 'array') {
    const items = nonNull(schema.items);
    return Array.from({ length: count }, (_, i) => {
      if (items.enum) return items.enum[i % items.enum.length];
      // Distinct integers: a list may have to hold no two alike (uniqueItems, as allowedPauseDays).
      if (items.type === 'integer') return (items.minimum ?? 0) + i;
      return valueOf(items, items.maxLength ?? 36, name);
    });
  }
  if (schema.type === 'integer' || schema.type?.includes?.('integer')) return count;
  return stringOf(schema, count, name);
}

interface Case {
  readonly title: string;
  /** `open`: an operation without security (Stripe's events), whose quota is the client address's. */
  readonly operation: { readonly method: string; readonly path: string; readonly testMode: boolean; readonly open: boolean };
  readonly where: 'path' | 'query' | 'header' | 'body';
  /** The parameter's name, or the body field's JSON Pointer. */
  readonly field: string;
  readonly schema: Schema;
  readonly bound: Bound;
  /** The body the field is set in (the request body's first example that has the field's parent). */
  readonly body: Record<string, unknown> | undefined;
  readonly pathParams: Record<string, string>;
}

/** Every property of a body schema, by JSON Pointer, nested objects included. */
function bodyFields(schema: Schema, prefix = ''): { pointer: string; schema: Schema }[] {
  const own = resolved(schema);
  return Object.entries((own.properties ?? {}) as Record<string, Schema>).flatMap(([name, property]) => {
    const field = nonNull(property);
    const pointer = `${prefix}/${name}`;
    return [{ pointer, schema: field }, ...(field.type === 'object' ? bodyFields(field, pointer) : [])];
  });
}

function exampleBody(requestBody: Schema, pointer: string): Record<string, unknown> {
  const examples = Object.values(resolved(requestBody).content['application/json'].examples ?? {}).map(
    (e: any) => e.value as Record<string, unknown>,
  );
  const parent = pointer.split('/')[1]!;
  return structuredClone(examples.find((e) => pointer.split('/').length > 2 && parent in e) ?? examples[0] ?? {});
}

function casesOf(path: string, method: string, operation: Schema): Case[] {
  const parameters = ((operation.parameters ?? []) as Schema[]).map(resolved);
  const pathParams = Object.fromEntries(parameters.filter((p) => p.in === 'path').map((p) => [p.name, String(p.example ?? randomUUID())]));
  const op = { method: method.toUpperCase(), path, testMode: path.startsWith('/v2/test-helpers/'), open: operation.security?.length === 0 };
  const fromParameters = parameters.flatMap((p) =>
    boundsOf(nonNull(p.schema), p.in).map((bound) => ({
      where: p.in,
      field: p.name as string,
      schema: nonNull(p.schema),
      bound,
      body: undefined,
    })),
  );
  // A JSON body's bounds (a merge patch's too); a file's body (an import's NDJSON or CSV) has none a schema states.
  const requestBody = operation.requestBody;
  const json = requestBody && Object.entries(resolved(requestBody).content).find(([type]) => type.endsWith('json'))?.[1];
  const fromBody = json
    ? bodyFields(json.schema).flatMap(({ pointer, schema }) =>
        boundsOf(schema, 'body').map((bound) => ({
          where: 'body' as const,
          field: pointer,
          schema,
          bound,
          body: exampleBody(requestBody, pointer),
        })),
      )
    : [];
  return [...fromParameters, ...fromBody].map((c) => ({
    ...c,
    title: `${op.method} ${path} ${c.where} ${c.field} ${c.bound.keyword} ${c.bound.at}`,
    operation: op,
    pathParams,
  }));
}

const CASES: Case[] = Object.entries(spec.paths as Record<string, Schema>).flatMap(([path, item]) =>
  METHODS.filter((m) => item[m]).flatMap((m) => casesOf(path, m, item[m])),
);

const SCHEDULE_POINTERS = new Set<string>(SCHEDULE_FIELDS.map((f) => `/${f}`));
const RATE_LIMIT = new RegExp(resolved(spec.components.headers.RateLimit).schema.pattern);
const RATE_LIMIT_POLICY = new RegExp(resolved(spec.components.headers['RateLimit-Policy']).schema.pattern);

function setPointer(body: Record<string, unknown>, pointer: string, value: unknown): void {
  const keys = pointer.split('/').slice(1);
  let at: any = body;
  for (const key of keys.slice(0, -1)) at = at[key] ??= {};
  at[keys.at(-1)!] = value;
}

async function send(t: TestService, keys: { apiKey: string; testApiKey: string }, c: Case, count: number): Promise<Reply> {
  const value = valueOf(c.schema, count, c.field.split('/').pop()!);
  const pathParams = { ...c.pathParams, ...(c.where === 'path' ? { [c.field]: String(value) } : {}) };
  const path = c.operation.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(pathParams[name]!));
  const query = c.where === 'query' ? `?${new URLSearchParams({ [c.field]: String(value) })}` : '';
  const headers = c.where === 'header' ? { [c.field]: String(value) } : {};
  let json: Record<string, unknown> | undefined = c.body;
  if (c.where === 'body') {
    json = structuredClone(c.body!);
    setPointer(json, c.field, value);
  }
  const apiKey = c.operation.testMode ? keys.testApiKey : keys.apiKey;
  return call(t.baseUrl, `${path}${query}`, { method: c.operation.method, apiKey, headers, ...(json ? { json } : {}) });
}

function expectRateLimitFields(reply: Reply, scope: 'merchant' | 'address'): void {
  expect(reply.headers.get('ratelimit')).toMatch(RATE_LIMIT);
  expect(reply.headers.get('ratelimit-policy')).toMatch(RATE_LIMIT_POLICY);
  expect(reply.headers.get('ratelimit')).toContain(`"${scope}"`);
}

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(() => t?.close());

describe('every bounded request field of the spec, at its bound and one past it', () => {
  it('finds the bounded fields (the walk reaches parameters, bodies and nested filters)', () => {
    const titles = CASES.map((c) => c.title);
    expect(titles).toContain('POST /v2/subscriptions/bulk/pause body /subscriptions maxItems 3000');
    expect(titles).toContain('POST /v2/subscriptions/bulk/pause body /filter/planId maxItems 100');
    expect(titles).toContain('GET /v2/subscriptions query limit maximum 100');
    expect(titles).toContain('POST /v2/subscriptions/{subscriptionId}/pause header Idempotency-Key maxLength 255');
    expect(titles).toContain('POST /v2/subscriptions/{subscriptionId}/pause body /reason maxLength 500');
  });

  it.each(CASES.map((c) => [c.title, c] as const))('%s', { timeout: 60_000 }, async (_title, c) => {
    const keys = await t.merchant();
    // A schedule field's own code; a cancel's `reason` belongs to no schedule.
    const expectedCode = c.where === 'body' && SCHEDULE_POINTERS.has(c.field) && !c.operation.path.endsWith('/cancel') ? '0043' : '0040';
    const name = (c.where === 'body' ? c.field.split('/').pop()! : c.field).toLowerCase();

    const atBound = await send(t, keys, c, c.bound.at);
    const refusedForIt =
      atBound.status === 400 && (atBound.body.errors ?? []).some((e: { path: string }) => e.path.toLowerCase().endsWith(name));
    expect(refusedForIt, `${c.bound.at} was refused: ${JSON.stringify(atBound.body)}`).toBe(false);
    expect(atBound.status).toBeLessThan(500);
    expectRateLimitFields(atBound, c.operation.open ? 'address' : 'merchant');

    const past = await send(t, keys, c, c.bound.past);
    expect(past.status, JSON.stringify(past.body)).toBe(400);
    expect(past.body.code).toBe(expectedCode);
    expect(past.body.errors.map((e: { path: string }) => e.path.toLowerCase())).toContainEqual(
      expect.stringMatching(new RegExp(`${name}$`)),
    );
    expectRateLimitFields(past, c.operation.open ? 'address' : 'merchant');
  });
});

describe('texts the service returns stay within the spec’s bounds whatever the request quotes', () => {
  it('a 1000-character unknown property and a 15,000-character path are cut in the problem', async () => {
    const keys = await t.merchant();
    const property = 'p'.repeat(1000);
    const unknown = await call(t.baseUrl, '/v2/subscriptions/bulk/pause', {
      apiKey: keys.apiKey,
      json: { subscriptions: [randomUUID()], [property]: 1 },
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors).toContainEqual({ path: '/', message: expect.stringMatching(/^must NOT have additional properties: p+…$/) });
    expect(Math.max(...unknown.body.errors.map((e: { message: string }) => e.message.length))).toBe(500);

    const longPath = `/v2/${'x'.repeat(15_000)}`;
    const notFound = await call(t.baseUrl, longPath, { method: 'GET', apiKey: keys.apiKey });
    expect(notFound.status).toBe(404);
    expect(notFound.body.detail).toMatch(/^No route for GET \/v2\/x+…$/);
    expect(notFound.body.detail).toHaveLength(4096);
  });
});

describe('the 400 every operation declares', () => {
  it('an operation without a request body answers a malformed JSON body 400 0040 (the test clock, the fixtures’ removal)', async () => {
    const keys = await t.merchant();
    for (const [method, path] of [
      ['GET', '/v2/test-helpers/clock'],
      ['DELETE', '/v2/test-helpers/subscriptions'],
    ] as const) {
      // Raw HTTP: fetch sends no body with a GET.
      const request = `${method} ${path} HTTP/1.1\r\nHost: x\r\nx-api-key: ${keys.testApiKey}\r\ncontent-type: application/json\r\ncontent-length: 1\r\nconnection: close\r\n\r\n{`;
      const reply = await rawExchange(t.baseUrl, request);
      const body = JSON.parse(reply.body);
      expect(reply.status).toBe(400);
      expect(body).toMatchObject({ code: '0040', errors: [{ path: '/', message: 'malformed JSON' }] });
      expect(await contractViolations({ method, path, status: reply.status, contentType: reply.headers['content-type']!, body })).toEqual(
        [],
      );
    }
  });
});

describe('the rate-limit fields on answers given before the API key is accepted', () => {
  it('401, 413 and 415 report the client address’s quota of failed authentications', async () => {
    const keys = await t.merchant();
    const unauthorized = await call(t.baseUrl, '/v2/subscriptions', { method: 'GET', apiKey: 'sk_live_not-a-key' });
    expect(unauthorized.status).toBe(401);
    expectRateLimitFields(unauthorized, 'address');
    const before = Number(unauthorized.headers.get('ratelimit')!.match(/r=(\d+)/)![1]);
    const again = await call(t.baseUrl, '/v2/subscriptions', { method: 'GET', apiKey: 'sk_live_not-a-key' });
    expect(Number(again.headers.get('ratelimit')!.match(/r=(\d+)/)![1])).toBe(before - 1);

    const tooLarge = await call(t.baseUrl, '/v2/subscriptions/bulk/pause', {
      apiKey: keys.apiKey,
      json: { subscriptions: Array(300 * 1024).fill(1) },
    });
    expect(tooLarge.status).toBe(413);
    expectRateLimitFields(tooLarge, 'address');
    const textPlain = await call(t.baseUrl, '/v2/subscriptions/bulk/pause', {
      apiKey: keys.apiKey,
      headers: { 'content-type': 'text/plain' },
      rawBody: 'x',
    });
    expect(textPlain.status).toBe(415);
    expectRateLimitFields(textPlain, 'address');
  });
});
