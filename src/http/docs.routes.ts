/**
 * The contract for humans and tools, without an API key: the spec itself (`/openapi.yaml`,
 * `/openapi.json`), one page that is both the API reference and a console sending requests to this
 * service from the browser (`/docs`, Scalar's API reference), with a curl and a generated-client
 * sample per operation, and the webhooks as an AsyncAPI document (`/docs/asyncapi.yaml`, generated
 * from the spec). The bundle comes from npm, and nothing is fetched from elsewhere (no CDN, a local
 * favicon). These are infrastructure, not API operations, so they sit outside the spec on @koa/router.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import Router from '@koa/router';
import { parse } from 'yaml';
import { SPEC_PATH } from '../lib/spec.js';
import { asyncapiDocument, type OpenApiSpec } from './docs-asyncapi.js';
import { consoleSpec, FAVICON_ICO } from './docs-assets.js';
import { withCodeSamples } from './docs-samples.js';

const require = createRequire(import.meta.url);

const SCALAR_KEY_PLACEHOLDER = 'QUxMIFlPVVIgQkFTRSBBUkUgQkVMT05HIFRPIFVT';

/**
 * Below Scalar's md breakpoint its request window puts the sidebar's toggle over the server box:
 * the address bar moves right of it.
 */
const PAGE_CSS = '@media (max-width: 767px) { .scalar-client .t-app__top-container { padding-left: 3rem; } }';

// One page is the reference and the console: it sends requests to the service that serves it,
// whatever host and port it runs on; fonts are the browser's own, so the page loads nothing from outside.
const page = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>Subscription Pause and Resume API</title>
  </head>
  <body>
    <div id="app"></div>
    <script src="/docs/scalar.standalone.js"></script>
    <script>
      Scalar.createApiReference('#app', {
        url: '/docs/openapi.json',
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
        customCss: ${JSON.stringify(PAGE_CSS)},
      });
    </script>
  </body>
</html>
`;

/** The line the rendered spec's description starts with: the webhooks' document is one link away. */
const ASYNCAPI_LINK = 'The webhooks this API sends, as an AsyncAPI 3.0 document: [/docs/asyncapi.yaml](/docs/asyncapi.yaml).';

/** What the page renders: curl and client samples per operation, no example values a request would send, no placeholder licence. */
function renderedSpec(yamlText: string): Record<string, unknown> {
  const spec = consoleSpec(withCodeSamples(parse(yamlText)) as Record<string, unknown>);
  const info = spec.info as { description?: string };
  return { ...spec, info: { ...info, description: `${ASYNCAPI_LINK}\n\n${info.description ?? ''}` } };
}

const script = (body: string) => (ctx: { type: string; body: unknown; set(name: string, value: string): void }) => {
  ctx.type = 'application/javascript; charset=utf-8';
  ctx.set('Cache-Control', 'public, max-age=3600');
  ctx.body = body;
};

export function docsRouter(): Router {
  const yamlText = readFileSync(SPEC_PATH, 'utf8');
  const asyncapi = asyncapiDocument(parse(yamlText) as OpenApiSpec);
  const json = JSON.stringify(parse(yamlText));
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
  router.get('/docs/openapi.json', fixed('application/json', JSON.stringify(renderedSpec(yamlText))));
  router.get('/docs', fixed('text/html; charset=utf-8', page));
  // The console had a page of its own: its links still lead to it, now the reference itself.
  router.get('/docs/try', (ctx) => {
    ctx.status = 301;
    ctx.redirect('/docs');
  });
  router.get('/docs/asyncapi.yaml', fixed('application/yaml', asyncapi));
  router.get('/favicon.ico', (ctx) => {
    ctx.type = 'image/x-icon';
    ctx.set('Cache-Control', 'public, max-age=86400');
    ctx.body = FAVICON_ICO;
  });
  router.get('/docs/scalar.standalone.js', script(scalar));
  return router;
}
