/**
 * The contract for humans and tools, without an API key: the spec itself (`/openapi.yaml`,
 * `/openapi.json`) and an API reference rendered from it by Redoc, bundled from npm (no CDN),
 * with a curl and a generated-client sample per operation (Redoc has no console to send requests:
 * the curl samples are the way to try one; Scalar's reference, which has one, is not installed).
 * These are infrastructure, not API operations, so they sit outside the spec on @koa/router.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import Router from '@koa/router';
import { parse } from 'yaml';
import { SPEC_PATH } from '../lib/spec.js';
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
    <redoc spec-url="/docs/openapi.json" hide-download-button="false"></redoc>
    <script src="/docs/redoc.standalone.js"></script>
  </body>
</html>
`;

export function docsRouter(): Router {
  const yamlText = readFileSync(SPEC_PATH, 'utf8');
  const json = JSON.stringify(parse(yamlText));
  const withSamples = JSON.stringify(withCodeSamples(parse(yamlText)));
  const redoc = readFileSync(require.resolve('redoc/bundles/redoc.standalone.js'));
  const router = new Router();
  router.get('/openapi.yaml', (ctx) => {
    ctx.type = 'application/yaml';
    ctx.body = yamlText;
  });
  router.get('/openapi.json', (ctx) => {
    ctx.type = 'application/json';
    ctx.body = json;
  });
  // What the reference renders: the spec plus curl and client samples for each operation.
  router.get('/docs/openapi.json', (ctx) => {
    ctx.type = 'application/json';
    ctx.body = withSamples;
  });
  router.get('/docs', (ctx) => {
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = page;
  });
  router.get('/docs/redoc.standalone.js', (ctx) => {
    ctx.type = 'application/javascript';
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.body = redoc;
  });
  return router;
}
