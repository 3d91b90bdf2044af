/** The spec and the API reference, served without a key. Plain fetch: these routes are outside the contract by design. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { Problems } from '../../src/errors.js';
import { projectRoot } from '../../src/lib/project-root.js';
import { SPEC_PATH } from '../../src/lib/spec.js';
import { startTestService, type TestService } from '../support/service.js';

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(() => t.close());

describe('the published contract', () => {
  it('GET /openapi.yaml serves the spec file as it is, without an API key', async () => {
    const res = await fetch(`${t.baseUrl}/openapi.yaml`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/yaml/);
    expect(await res.text()).toBe(readFileSync(SPEC_PATH, 'utf8'));
  });

  it('GET /openapi.json serves the same spec as JSON', async () => {
    const res = await fetch(`${t.baseUrl}/openapi.json`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(parse(readFileSync(SPEC_PATH, 'utf8')));
  });

  it("GET /docs/asyncapi.yaml serves the webhooks as the generated AsyncAPI 3.0 document, linked from the reference's introduction", async () => {
    const res = await fetch(`${t.baseUrl}/docs/asyncapi.yaml`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/yaml/);
    const text = await res.text();
    expect(text).toBe(readFileSync(join(projectRoot(), 'generated', 'asyncapi.yaml'), 'utf8'));
    const document = parse(text) as { asyncapi: string; components: { messages: Record<string, { name: string }> } };
    expect(document.asyncapi).toBe('3.0.0');
    const webhooks = Object.keys((parse(readFileSync(SPEC_PATH, 'utf8')) as { webhooks: object }).webhooks);
    expect(
      Object.values(document.components.messages)
        .map((m) => m.name)
        .sort(),
      // Each event type twice: a webhook delivery and a Kafka destination's CloudEvent.
    ).toEqual([...webhooks, ...webhooks].sort());
    const rendered = await (await fetch(`${t.baseUrl}/docs/openapi.json`)).json();
    expect(rendered.info.description).toMatch(
      /^The webhooks this API sends, as an AsyncAPI 3\.0 document: \[\/docs\/asyncapi\.yaml\]\(\/docs\/asyncapi\.yaml\)\./,
    );
  });

  it('GET /docs serves one page, the reference and console (Scalar), on the rendered spec, bundled, no CDN', async () => {
    const page = await fetch(`${t.baseUrl}/docs`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain("url: '/docs/openapi.json'");
    expect(html).toContain('<script src="/docs/scalar.standalone.js"></script>');
    expect(html).not.toMatch(/https?:\/\//);
    const script = await fetch(`${t.baseUrl}/docs/scalar.standalone.js`);
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toMatch(/javascript/);
    expect((await script.arrayBuffer()).byteLength).toBeGreaterThan(100_000);
  });

  it("GET /docs/try, the console's page of old, leads to /docs; no second reference bundle is served", async () => {
    const moved = await fetch(`${t.baseUrl}/docs/try`, { redirect: 'manual' });
    expect(moved.status).toBe(301);
    expect(moved.headers.get('location')).toBe('/docs');
    expect((await fetch(`${t.baseUrl}/docs/redoc.standalone.js`)).status).toBe(404);
  });

  it('GET /favicon.ico answers an icon, not 404', async () => {
    const res = await fetch(`${t.baseUrl}/favicon.ico`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/x-icon');
    expect(Buffer.from(await res.arrayBuffer()).subarray(0, 4)).toEqual(Buffer.from([0, 0, 1, 0]));
  });

  it('the rendered spec (/docs/openapi.json) gives no optional parameter and no path id a value the console would fill in', async () => {
    const rendered = await (await fetch(`${t.baseUrl}/docs/openapi.json`)).json();
    const parameters = [
      ...Object.values(rendered.components.parameters as Record<string, any>),
      ...Object.values(rendered.paths as Record<string, Record<string, any>>).flatMap((item) =>
        Object.values(item).flatMap((op: any) => op.parameters ?? []),
      ),
    ].filter((p) => !('$ref' in p));
    const optional = parameters.filter((p) => p.required !== true || p.in === 'path');
    expect(optional.map((p) => p.name)).toEqual(expect.arrayContaining(['status', 'limit', 'startingAfter', 'subscriptionId', 'planId']));
    for (const p of optional) {
      expect(p, p.name).not.toHaveProperty('example');
      expect(p.schema, p.name).not.toHaveProperty('$ref');
      for (const key of ['example', 'examples', 'default', 'enum']) expect(p.schema, `${p.name}.schema.${key}`).not.toHaveProperty(key);
    }
    expect(rendered.info).not.toHaveProperty('license');
  });

  it('the reference renders the spec with a curl and a generated-client sample for every operation, and no licence where it has none', async () => {
    const spec = parse(readFileSync(SPEC_PATH, 'utf8'));
    const rendered = await (await fetch(`${t.baseUrl}/docs/openapi.json`)).json();
    const operations = Object.values(rendered.paths as Record<string, Record<string, Record<string, any>>>).flatMap((item) =>
      Object.values(item),
    );
    expect(operations.length).toBeGreaterThan(0);
    for (const operation of operations) {
      const [curl, typescript] = operation['x-codeSamples'];
      expect(curl.source).toMatch(/^curl -s /);
      expect(typescript.source).toContain(`await api.${operation.operationId}(`);
      delete operation['x-codeSamples'];
    }
    // npm's UNLICENSED is no licence: the page does not show it as one.
    expect(spec.info.license.identifier).toBe('UNLICENSED');
    expect(rendered.info).not.toHaveProperty('license');
    expect(rendered.info.description).toContain(spec.info.description);
    expect(Object.keys(rendered.paths)).toEqual(Object.keys(spec.paths));
    expect(rendered.components.schemas).toEqual(spec.components.schemas);
    expect(rendered.webhooks).toEqual(spec.webhooks);
  });

  it('the spec’s error table has one row for every code the service can answer, with what to do', async () => {
    const { tags } = parse(readFileSync(SPEC_PATH, 'utf8')) as { tags: { name: string; description: string }[] };
    const table = tags.find((tag) => tag.name === 'Error codes')!.description;
    const rows = new Set([...table.matchAll(/^\| (\d{3}) \| (\d{4}) \| .+ \| .+ \|$/gm)].map(([, status, code]) => `${status} ${code}`));
    expect(rows).toEqual(new Set(Object.values(Problems).map((p) => `${p.status} ${p.code}`)));
  });

  it('docs/errors.md’s table has a row for every code the service can answer', () => {
    const guide = readFileSync(join(projectRoot(), 'docs', 'errors.md'), 'utf8');
    const rows = new Set([...guide.matchAll(/^\| (\d{3}) \| (\d{4}) \| .+ \|$/gm)].map(([, status, code]) => `${status} ${code}`));
    const missing = Object.values(Problems)
      .map((p) => `${p.status} ${p.code}`)
      .filter((row) => !rows.has(row));
    expect(missing, 'status and code pairs missing from docs/errors.md').toEqual([]);
  });
});
