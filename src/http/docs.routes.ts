/**
 * The contract for humans and tools, without an API key: the spec itself (`/openapi.yaml`,
 * `/openapi.json`), an API reference rendered from it by Redoc (`/docs`), with a curl and a
 * generated-client sample per operation, and a console to send requests to this service from the
 * browser (`/docs/try`, Scalar's reference: Redoc has none), and the webhooks as an AsyncAPI document
 * (`/docs/asyncapi.yaml`, generated from the spec). Both bundles come from npm (no CDN).
 * These are infrastructure, not API operations, so they sit outside the spec on @koa/router.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import Router from '@koa/router';
import { parse } from 'yaml';
import { SPEC_PATH } from '../lib/spec.js';
import { asyncapiDocument } from './docs-asyncapi.js';
import { withCodeSamples } from './docs-samples.js';

const require = createRequire(import.meta.url);

const page = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>Subscription Pause and Resume API</title>
  </head>
  <body>
    <nav aria-label="More of the contract"><a href="/docs/asyncapi.yaml">The webhooks as an AsyncAPI 3.0 document</a></nav>
    <redoc spec-url="/docs/openapi.json" hide-download-button="false"></redoc>
    <script src="/docs/redoc.standalone.js"></script>
  </body>
</html>
`;

// The console sends requests to the service that serves it, whatever host and port it runs on;
// fonts are the browser's own, so the page loads nothing from outside.
const consolePage = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>Subscription Pause and Resume API: console</title>
  </head>
  <body>
    <div id="app"></div>
    <script src="/docs/scalar.standalone.js"></script>
    <script>
      Scalar.createApiReference('#app', {
        url: '/docs/openapi.json',
        servers: [{ url: window.location.origin, description: 'this service' }],
        withDefaultFonts: false,
        hideClientButton: true,
        telemetry: false,
        showDeveloperTools: 'never',
        // Nothing that calls outside services: no AI agent, no MCP generator.
        agent: { disabled: true },
        mcp: { disabled: true },
      });
    </script>
  </body>
</html>
`;

const script = (body: Buffer) => (ctx: { type: string; body: unknown; set(name: string, value: string): void }) => {
  ctx.type = 'application/javascript';
  ctx.set('Cache-Control', 'public, max-age=3600');
  ctx.body = body;
};

export function docsRouter(): Router {
  const yamlText = readFileSync(SPEC_PATH, 'utf8');
  const asyncapi = asyncapiDocument(parse(yamlText));
  const json = JSON.stringify(parse(yamlText));
  const withSamples = JSON.stringify(withCodeSamples(parse(yamlText)));
  const redoc = readFileSync(require.resolve('redoc/bundles/redoc.standalone.js'));
  // The browser bundle is not among the package's exports: found beside its entry point.
  const scalar = readFileSync(join(dirname(require.resolve('@scalar/api-reference')), 'browser', 'standalone.js'));
  const router = new Router();
  /** A fixed body with its media type. */
  const fixed = (type: string, body: string) => (ctx: { type: string; body: unknown }) => {
    ctx.type = type;
    ctx.body = body;
  };
  router.get('/openapi.yaml', fixed('application/yaml', yamlText));
  router.get('/openapi.json', fixed('application/json', json));
  // What the reference renders: the spec plus curl and client samples for each operation.
  router.get('/docs/openapi.json', fixed('application/json', withSamples));
  router.get('/docs', fixed('text/html; charset=utf-8', page));
  router.get('/docs/asyncapi.yaml', fixed('application/yaml', asyncapi));
  router.get('/docs/try', fixed('text/html; charset=utf-8', consolePage));
  router.get('/docs/redoc.standalone.js', script(redoc));
  router.get('/docs/scalar.standalone.js', script(scalar));
  return router;
}
