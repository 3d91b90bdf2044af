/**
 * Rebuilds generated/ from openapi/openapi.yaml, the single source of truth:
 *   generated/openapi.d.ts   types (openapi-typescript), used by the service
 *   generated/requests.http  a request collection (+ http-client.env.json: mock and service)
 *   generated/asyncapi.yaml  the webhooks as an AsyncAPI 3.0 document (src/http/docs-asyncapi.ts)
 *   clients/typescript/, clients/python/, clients/go/, clients/java/   the clients merchants install (openapi-generator,
 *                            jar pinned in openapitools.json, cached in .cache/openapi-generator;
 *                            scripts/clients/generate.ts), then built: a tarball and a wheel in
 *                            clients/dist/ (scripts/clients/build.ts). clients/typescript/src/ is
 *                            also the client the repository's own tests import: its one copy.
 * The spec is linted first (Redocly, then Spectral with .spectral.yaml), and nothing is generated from one that fails.
 *   tsx scripts/generate.ts           write generated/ and clients/, and build the packages
 *   tsx scripts/generate.ts --check   exit 1 when generated/ or clients/ differs from what the spec produces
 *   tsx scripts/generate.ts --spec FILE --out DIR   generated/ and clients/typescript/ from another spec, under DIR
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync, readdirSync, rmSync, statSync, cpSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { asyncapiDocument, type OpenApiSpec } from '../src/http/docs-asyncapi.js';
import { ENVIRONMENTS, httpCollection } from './http-collection.js';
import { buildPackages, describeBuilt } from './clients/build.js';
import { generatePackage, PACKAGES } from './clients/generate.js';
import { skipStep } from './skipped-steps.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const spec = join(root, 'openapi', 'openapi.yaml');
const bin = (name: string) => join(root, 'node_modules', '.bin', name);

/**
 * Redocly first, one line per problem: the generators' own reports of a broken spec are dozens of
 * lines with stack traces (41 lines for one unresolved `$ref`).
 */
function lint(specPath: string): void {
  const result = spawnSync(bin('redocly'), ['lint', specPath, '--format', 'stylish'], { cwd: root, encoding: 'utf8' });
  const file = relative(root, specPath);
  const problems = result.stdout
    .split('\n')
    .map((line) => /^\s+(\d+:\d+)\s+(error|warning)\s+(\S+)\s+(.*)$/.exec(line))
    .filter((match) => match !== null)
    .map(([, at, severity, rule, message]) => `${file}:${at} ${severity} ${message} (${rule})`);
  if (result.status === 0) return lintSecurity(specPath);
  console.error(problems.length > 0 ? problems.join('\n') : `${result.stdout}${result.stderr}`);
  console.error(`${file} does not lint: nothing generated`);
  process.exit(1);
}

/**
 * Then Spectral, with the committed ruleset (.spectral.yaml: spectral:oas and the OWASP API
 * Security ruleset), one line per error: a client generated from an unbounded schema accepts anything.
 */
function lintSecurity(specPath: string): void {
  const args = [
    'lint',
    specPath,
    '--ruleset',
    join(root, '.spectral.yaml'),
    '--fail-severity',
    'error',
    '--display-only-failures',
    '--format',
    'text',
  ];
  const result = spawnSync(bin('spectral'), args, { cwd: root, encoding: 'utf8' });
  if (result.status === 0) return;
  const file = relative(root, specPath);
  const problems = result.stdout
    .split('\n')
    .map((line) => /^\S+:(\d+:\d+) error (\S+) "?(.*?)"?$/.exec(line))
    .filter((match) => match !== null)
    .map(([, at, rule, message]) => `${file}:${at} error ${message} (${rule})`);
  console.error(problems.length > 0 ? problems.join('\n') : `${result.stdout}${result.stderr}`);
  console.error(`${file} does not lint: nothing generated`);
  process.exit(1);
}

/** openapi-generator-cli downloads its jar on first use, silently: say what and how big first. */
async function announceGeneratorDownload(): Promise<void> {
  const { version, storageDir } = (JSON.parse(readFileSync(join(root, 'openapitools.json'), 'utf8')) as GeneratorConfig)['generator-cli'];
  if (existsSync(join(root, storageDir, `${version}.jar`))) return;
  const url = `https://repo1.maven.org/maven2/org/openapitools/openapi-generator-cli/${version}/openapi-generator-cli-${version}.jar`;
  const head = await fetch(url, { method: 'HEAD', signal: AbortSignal.timeout(5000) }).catch(() => undefined);
  const bytes = Number(head?.headers.get('content-length') ?? NaN);
  const size = Number.isFinite(bytes) ? `, ${(bytes / 1e6).toFixed(1)} MB` : '';
  console.error(`downloading openapi-generator-cli ${version} (first run only${size}) from Maven Central into ${storageDir}/`);
}

interface GeneratorConfig {
  readonly 'generator-cli': { readonly version: string; readonly storageDir: string };
}

function generateInto(dir: string, specPath = spec): void {
  lint(specPath);
  mkdirSync(dir, { recursive: true });
  const lintOnce = join(root, 'scripts', 'openapi-typescript.redocly.yaml');
  execFileSync(bin('openapi-typescript'), [specPath, '--redocly', lintOnce, '--output', join(dir, 'openapi.d.ts')], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  writeFileSync(join(dir, 'requests.http'), httpCollection(parse(readFileSync(specPath, 'utf8'))));
  writeFileSync(join(dir, 'http-client.env.json'), `${JSON.stringify(ENVIRONMENTS, null, 2)}\n`);
  writeFileSync(join(dir, 'asyncapi.yaml'), asyncapiDocument(parse(readFileSync(specPath, 'utf8')) as OpenApiSpec));
}

function listFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => statSync(join(dir, f)).isFile())
    .sort();
}

function differences(expected: string, actual: string): string[] {
  const want = listFiles(expected);
  const have = listFiles(actual);
  const problems = want
    .filter((f) => !have.includes(f) || !readFileSync(join(expected, f)).equals(readFileSync(join(actual, f))))
    .map((f) => (have.includes(f) ? `differs: ${f}` : `missing: ${f}`));
  return problems.concat(have.filter((f) => !want.includes(f)).map((f) => `not generated by the spec: ${f}`));
}

interface Output {
  readonly target: string;
  readonly make: (dir: string) => void;
}

/** What a spec produces: generated/, and the packages under clients/ (scripts/clients/generate.ts). */
function outputs(specPath: string): Output[] {
  return [
    { target: 'generated', make: (dir) => generateInto(dir, specPath) },
    ...PACKAGES.map((pkg) => ({ target: join('clients', pkg.folder), make: (dir: string) => generatePackage(pkg, specPath, dir) })),
  ];
}

// `--spec FILE --out DIR` generates another spec somewhere else (the regeneration test uses it):
// only what the service and its tests compile, as the Python and Go generators add minutes.
const argument = (name: string) => {
  const at = process.argv.indexOf(name);
  return at > 0 ? process.argv[at + 1] : undefined;
};
const otherSpec = argument('--spec');
const otherOut = argument('--out');
// The client generator is a Java program: without Java the drift check cannot run, and says so in one line.
if (process.argv.includes('--check') && spawnSync('sh', ['-c', 'command -v java']).status !== 0) {
  skipStep(
    'generated/ and clients/ drift check',
    'the client generator (openapi-generator) runs on Java 11+, which is not installed',
    "install Java 11+ (Debian's default-jre-headless), then npm run check:generated",
  );
  process.exit(0);
}
await announceGeneratorDownload();
if (otherSpec && otherOut) {
  const compiled = ['generated', join('clients', 'typescript')];
  for (const { target, make } of outputs(otherSpec).filter((o) => compiled.includes(o.target))) make(join(otherOut, target));
  process.exit(0);
}
const OUTPUTS = outputs(spec);
const work = mkdtempSync(join(tmpdir(), 'subsvc-generate-'));
try {
  for (const { target, make } of OUTPUTS) make(join(work, target));
  if (process.argv.includes('--check')) {
    const drift = OUTPUTS.flatMap(({ target }) => differences(join(work, target), join(root, target)).map((d) => `${target}: ${d}`));
    if (drift.length > 0) {
      console.error(`generated/ or clients/ has drifted from openapi/ (run npm run generate):\n  ${drift.join('\n  ')}`);
      // exitCode, not exit(): the temporary folder is removed below either way.
      process.exitCode = 1;
    } else {
      console.error(`${OUTPUTS.map((o) => `${o.target}/`).join(', ')} match ${relative(root, spec)}`);
    }
  } else {
    for (const { target } of OUTPUTS) {
      rmSync(join(root, target), { recursive: true, force: true });
      cpSync(join(work, target), join(root, target), { recursive: true });
    }
    console.error(`${OUTPUTS.map((o) => `${o.target}/`).join(', ')} rebuilt from ${relative(root, spec)}`);
    for (const line of describeBuilt(buildPackages())) console.error(line);
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
