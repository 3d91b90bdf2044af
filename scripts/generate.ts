/**
 * Rebuilds generated/ from openapi/openapi.yaml, the single source of truth:
 *   generated/openapi.d.ts   types (openapi-typescript), used by the service
 *   generated/requests.http  a request collection (+ http-client.env.json: mock and service)
 *   generated/client/        a typescript-fetch client (openapi-generator, jar pinned in
 *                            openapitools.json, cached in .cache/openapi-generator)
 * The spec is linted first (Redocly), and nothing is generated from one that fails.
 *   tsx scripts/generate.ts           write generated/
 *   tsx scripts/generate.ts --check   exit 1 when generated/ differs from what the spec produces
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync, readdirSync, rmSync, statSync, cpSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, stringify } from 'yaml';
import { ENVIRONMENTS, httpCollection } from './http-collection.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const spec = join(root, 'openapi', 'openapi.yaml');
const target = join(root, 'generated');
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
  if (result.status === 0) return;
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
  const size = Number.isFinite(bytes) ? `${(bytes / 1024 / 1024).toFixed(1)} MB` : 'about 30 MB';
  console.error(`downloading openapi-generator-cli ${version} (${size}, first run only) from Maven Central into ${storageDir}/`);
}

interface GeneratorConfig {
  readonly 'generator-cli': { readonly version: string; readonly storageDir: string };
}

function generateInto(dir: string, specPath = spec): void {
  lint(specPath);
  mkdirSync(dir, { recursive: true });
  execFileSync(bin('openapi-typescript'), [specPath, '--output', join(dir, 'openapi.d.ts')], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  generateClient(specPath, join(dir, 'client'));
  writeFileSync(join(dir, 'requests.http'), httpCollection(parse(readFileSync(specPath, 'utf8'))));
  writeFileSync(join(dir, 'http-client.env.json'), `${JSON.stringify(ENVIRONMENTS, null, 2)}\n`);
}

/** The bulk operations whose 200 is a dry run's answer, beside their 202 (docs/design.md §6a). */
const DRY_RUN_OPERATIONS = ['/v2/subscriptions/bulk/pause', '/v2/subscriptions/bulk/resume'];

/**
 * The client calls the service, so it is generated without the spec's `webhooks` (requests the
 * service sends, which typescript-fetch renders as broken API methods); their payload types are
 * in openapi.d.ts. The bulk operations keep their 202 as their return type: typescript-fetch
 * types a method by its lowest 2xx, which would make every bulk call return the dry run's 200.
 * A dry run is read from the `…Raw` method's response with `BulkDryRunFromJSON` (docs/clients.md).
 */
function clientSpec(specPath: string, dir: string): string {
  const document = parse(readFileSync(specPath, 'utf8')) as Record<string, unknown>;
  delete document.webhooks;
  const paths = document.paths as Record<string, { post?: { responses?: Record<string, unknown> } }>;
  for (const path of DRY_RUN_OPERATIONS) delete paths[path]?.post?.responses?.['200'];
  const out = join(dir, 'client-spec.yaml');
  writeFileSync(out, stringify(document));
  return out;
}

/** The template override only adds `override` to one constructor parameter, for our noImplicitOverride. */
function generateClient(specPath: string, out: string): void {
  const scratch = mkdtempSync(join(tmpdir(), 'subsvc-client-spec-'));
  try {
    generateClientFrom(clientSpec(specPath, scratch), out);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

function generateClientFrom(specPath: string, out: string): void {
  const args = ['generate', '-i', specPath, '-g', 'typescript-fetch', '-o', out];
  args.push('-t', join(root, 'openapi', 'generator-templates', 'typescript-fetch'));
  args.push('--additional-properties=importFileExtension=.js', '--global-property', 'apiDocs=false,modelDocs=false');
  // The first run downloads the jar from Maven Central. The Node installed from npm trusts only the
  // CAs built into it, where a distribution's Node trusts the system's: ask for the system's, so
  // that a proxy or mirror the machine trusts works here too (older Nodes ignore the variable).
  const env = { ...process.env, PWD: root, NODE_USE_SYSTEM_CA: '1' };
  try {
    execFileSync(bin('openapi-generator-cli'), args, { cwd: root, env, stdio: 'pipe' });
  } catch (error) {
    const e = error as { stdout?: Buffer; stderr?: Buffer };
    process.stderr.write(`${e.stdout?.toString() ?? ''}${e.stderr?.toString() ?? ''}`);
    throw error;
  }
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

// `--spec FILE --out DIR` generates another spec somewhere else (the regeneration test uses it).
const argument = (name: string) => {
  const at = process.argv.indexOf(name);
  return at > 0 ? process.argv[at + 1] : undefined;
};
const otherSpec = argument('--spec');
const otherOut = argument('--out');
await announceGeneratorDownload();
if (otherSpec && otherOut) {
  generateInto(otherOut, otherSpec);
  process.exit(0);
}
const work = mkdtempSync(join(tmpdir(), 'subsvc-generate-'));
try {
  generateInto(work);
  if (process.argv.includes('--check')) {
    const drift = differences(work, target);
    if (drift.length > 0) {
      console.error(`generated/ has drifted from openapi/ (run npm run generate):\n  ${drift.join('\n  ')}`);
      process.exit(1);
    }
    console.error(`generated/ matches ${relative(root, spec)}`);
  } else {
    rmSync(target, { recursive: true, force: true });
    cpSync(work, target, { recursive: true });
    console.error(`generated/ rebuilt from ${relative(root, spec)}`);
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
