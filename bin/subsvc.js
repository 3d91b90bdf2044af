#!/usr/bin/env node
// The compiled CLI. `npm ci` builds dist/ and links this file as node_modules/.bin/subsvc (the
// `prepare` script), so that `npx subsvc` runs it at once: with a `bin` in package.json, npx would
// instead install the project into its own cache, building it, on every call.
// The Node it runs on is installed with it (node_modules/.bin/node, put first on PATH by npm scripts
// and npx); run by hand, `node` may be an older system one: say so instead of failing somewhere later.
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 24 || (major === 24 && minor < 18)) {
  console.error(
    `subsvc: needs Node 24.18 or later and ${process.execPath} is ${process.version}: run it through npm (npm start, npx subsvc …), which uses the Node 24 that npm ci installed in node_modules/.bin`,
  );
  process.exit(1);
}
await import('../dist/src/main/cli.js');
