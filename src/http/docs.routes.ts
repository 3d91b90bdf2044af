/**
 * The contract for humans and tools, without an API key: the spec itself (`/openapi.yaml`,
 * `/openapi.json`), an API reference rendered from it by Redoc (`/docs`), with a curl and a
 * generated-client sample per operation, and a console to send requests to this service from the
 * browser (`/docs/try`, Scalar's reference: Redoc has none; `/docs` links to it), and the webhooks as
 * an AsyncAPI document (`/docs/asyncapi.yaml`, generated from the spec). Both bundles come from npm,
 * and nothing is fetched from elsewhere (no CDN, a local favicon and logo).
 * These are infrastructure, not API operations, so they sit outside the spec on @koa/router.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import Router from '@koa/router';
import { parse } from 'yaml';
import { SPEC_PATH } from '../lib/spec.js';
import { asyncapiDocument, type OpenApiSpec } from './docs-asyncapi.js';
import { consoleSpec, FAVICON_ICO, LOGO_SVG, withoutPlaceholderLicence } from './docs-assets.js';
import { withCodeSamples } from './docs-samples.js';

const require = createRequire(import.meta.url);

const REDOC_CDN_LOGO = 'https://cdn.redoc.ly/redoc/logo-mini.svg';
const SCALAR_KEY_PLACEHOLDER = 'QUxMIFlPVVIgQkFTRSBBUkUgQkVMT05HIFRPIFVT';

// A bar above the reference leads to the console; Redoc keeps its menu below it (scroll-y-offset
// reads the bar's bottom). The bar is as tall as its links need (sticky, not a fixed height), and
// on a narrow screen drops its lead-in and shortens the links, so that it stays one or two lines.
const page = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>Subscription Pause and Resume API</title>
    <style>
      body { margin: 0; }
      #console-link { position: sticky; top: 0; z-index: 10; display: flex; flex-wrap: wrap; align-items: center; gap: 2px 0.8em;
        box-sizing: border-box; min-height: 40px; padding: 6px 20px; background: #2040a0; color: #fff; font: 14px/1.4 sans-serif; }
      #console-link a { color: #fff; font-weight: bold; }
      #console-link .short { display: none; }
      @media (max-width: 48rem) {
        #console-link { padding: 6px 12px; }
        #console-link .long { display: none; }
        #console-link .short { display: inline; }
      }
    </style>
  </head>
  <body>
    <nav id="console-link"><span class="long">To send requests to this service from the browser:</span> <a href="/docs/try"><span class="long">open the console (/docs/try)</span><span class="short">Console</span></a> <a href="/docs/asyncapi.yaml"><span class="long">the webhooks as an AsyncAPI 3.0 document</span><span class="short">Webhooks (AsyncAPI)</span></a></nav>
    <redoc spec-url="/docs/openapi.json" hide-download-button="false" scroll-y-offset="#console-link"></redoc>
    <script src="/docs/redoc.standalone.js"></script>
  </body>
</html>
`;

/**
 * Below Scalar's md breakpoint its request window puts the sidebar's toggle over the server box:
 * the address bar moves right of it.
 */
const CONSOLE_CSS = '@media (max-width: 767px) { .scalar-client .t-app__top-container { padding-left: 3rem; } }';

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
        url: '/docs/try/openapi.json',
        servers: [{ url: window.location.origin, description: 'this service' }],
        // The key box starts empty (its placeholder names the test key npm start prints).
        authentication: { preferredSecurityScheme: 'ApiKey', securitySchemes: { ApiKey: { 'x-scalar-secret-token': '' } } },
        persistAuth: false,
        withDefaultFonts: false,
        hideClientButton: true,
        telemetry: false,
        showDeveloperTools: 'never',
        // Nothing that calls outside services: no AI agent, no MCP generator.
        agent: { disabled: true },
        mcp: { disabled: true },
        customCss: ${JSON.stringify(CONSOLE_CSS)},
      });
    </script>
  </body>
</html>
`;

const script = (body: string) => (ctx: { type: string; body: unknown; set(name: string, value: string): void }) => {
  ctx.type = 'application/javascript; charset=utf-8';
  ctx.set('Cache-Control', 'public, max-age=3600');
  ctx.body = body;
};

export function docsRouter(): Router {
  const yamlText = readFileSync(SPEC_PATH, 'utf8');
  const asyncapi = asyncapiDocument(parse(yamlText) as OpenApiSpec);
  const json = JSON.stringify(parse(yamlText));
  const withSamples = JSON.stringify(withoutPlaceholderLicence(withCodeSamples(parse(yamlText))));
  // Redoc's footer asks cdn.redoc.ly for its logo: served from here instead.
  const redoc = readFileSync(require.resolve('redoc/bundles/redoc.standalone.js'), 'utf8').replaceAll(REDOC_CDN_LOGO, '/docs/logo.svg');
  // The browser bundle is not among the package's exports: found beside its entry point. Its key
  // box's placeholder (a base64 joke) becomes the kind of key to paste.
  const scalar = readFileSync(join(dirname(require.resolve('@scalar/api-reference')), 'browser', 'standalone.js'), 'utf8').replaceAll(
    SCALAR_KEY_PLACEHOLDER,
    'sk_test_…',
  );
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
  router.get('/docs/try/openapi.json', fixed('application/json', JSON.stringify(consoleSpec(parse(yamlText) as Record<string, unknown>))));
  router.get('/docs/logo.svg', fixed('image/svg+xml', LOGO_SVG));
  router.get('/favicon.ico', (ctx) => {
    ctx.type = 'image/x-icon';
    ctx.set('Cache-Control', 'public, max-age=86400');
    ctx.body = FAVICON_ICO;
  });
  router.get('/docs/redoc.standalone.js', script(redoc));
  router.get('/docs/scalar.standalone.js', script(scalar));
  return router;
}
