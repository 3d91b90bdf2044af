/** The spec and the API reference, served without a key. Plain fetch: these routes are outside the contract by design. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { Problems } from '../src/errors.js';
import { projectRoot } from '../src/lib/project-root.js';
import { SPEC_PATH } from '../src/lib/spec.js';
import { startTestService, type TestService } from './support/service.js';

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

  it('GET /docs/asyncapi.yaml serves the webhooks as the generated AsyncAPI 3.0 document, linked from /docs', async () => {
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
    expect(await (await fetch(`${t.baseUrl}/docs`)).text()).toContain('href="/docs/asyncapi.yaml"');
  });

  it.each([
    [
      'GET /docs serves a page that renders the spec with the bundled Redoc, no CDN',
      '/docs',
      'spec-url="/docs/openapi.json"',
      '/docs/redoc.standalone.js',
    ],
    [
      'GET /docs/try serves the console (Scalar) on the same spec, bundled, no CDN',
      '/docs/try',
      "url: '/docs/try/openapi.json'",
      '/docs/scalar.standalone.js',
    ],
  ])('%s', async (_name, path, specReference, scriptPath) => {
    const page = await fetch(`${t.baseUrl}${path}`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain(specReference);
    expect(html).not.toMatch(/https?:\/\//);
    const script = await fetch(`${t.baseUrl}${scriptPath}`);
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toMatch(/javascript/);
    expect((await script.arrayBuffer()).byteLength).toBeGreaterThan(100_000);
  });

  it('GET /docs leads to the console at /docs/try', async () => {
    expect(await (await fetch(`${t.baseUrl}/docs`)).text()).toContain('<a href="/docs/try">');
  });

  it('GET /favicon.ico answers an icon, not 404', async () => {
    const res = await fetch(`${t.baseUrl}/favicon.ico`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/x-icon');
    expect(Buffer.from(await res.arrayBuffer()).subarray(0, 4)).toEqual(Buffer.from([0, 0, 1, 0]));
  });

  it('the Redoc bundle asks no CDN for its logo; the logo it asks for is served here', async () => {
    const bundle = await (await fetch(`${t.baseUrl}/docs/redoc.standalone.js`)).text();
    expect(bundle).not.toContain('cdn.redoc.ly');
    expect(bundle).toContain('"/docs/logo.svg"');
    const logo = await fetch(`${t.baseUrl}/docs/logo.svg`);
    expect(logo.status).toBe(200);
    expect(logo.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
  });

  it("the console's spec (/docs/try/openapi.json) gives no optional parameter and no path id a value to fill in", async () => {
    const rendered = await (await fetch(`${t.baseUrl}/docs/try/openapi.json`)).json();
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
    delete spec.info.license;
    expect(rendered).toEqual(spec);
  });

  it('the spec’s error table has one row for every code the service can answer, with what to do', async () => {
    const { tags } = parse(readFileSync(SPEC_PATH, 'utf8')) as { tags: { name: string; description: string }[] };
    const table = tags.find((tag) => tag.name === 'Error codes')!.description;
    const rows = new Set([...table.matchAll(/^\| (\d{3}) \| (\d{4}) \| .+ \| .+ \|$/gm)].map(([, status, code]) => `${status} ${code}`));
    expect(rows).toEqual(new Set(Object.values(Problems).map((p) => `${p.status} ${p.code}`)));
  });

  it('docs/api.md’s error table has a row for every code the service can answer', () => {
    const guide = readFileSync(join(projectRoot(), 'docs', 'api.md'), 'utf8');
    const rows = new Set([...guide.matchAll(/^\| (\d{3}) \| (\d{4}) \| .+ \|$/gm)].map(([, status, code]) => `${status} ${code}`));
    const missing = Object.values(Problems)
      .map((p) => `${p.status} ${p.code}`)
      .filter((row) => !rows.has(row));
    expect(missing, 'status and code pairs missing from docs/api.md').toEqual([]);
  });
});
