/** The spec and the API reference, served without a key. Plain fetch: these routes are outside the contract by design. */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
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

  it('GET /docs serves a page that renders the spec with the bundled Redoc, no CDN', async () => {
    const page = await fetch(`${t.baseUrl}/docs`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('spec-url="/openapi.json"');
    expect(html).not.toMatch(/https?:\/\//);
    const script = await fetch(`${t.baseUrl}/docs/redoc.standalone.js`);
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toMatch(/javascript/);
    expect((await script.arrayBuffer()).byteLength).toBeGreaterThan(100_000);
  });
});
