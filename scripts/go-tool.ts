/**
 * Tools that the checks build once from the Go module proxy into .cache/<name>/<version>/, as
 * FerretDB is built (src/db/ferretdb-build.ts): oasdiff for the breaking-change check, promtool for
 * the deployment's Prometheus files and the metrics test, stripe-mock for the Stripe connection's tests. Built, they run offline; the Go module
 * cache keeps the sources, so a rebuild downloads nothing.
 */
import { execFile, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { projectRoot } from '../src/lib/project-root.js';

const run = promisify(execFile);

export interface GoTool {
  readonly name: string;
  readonly module: string;
  /** The package to build, inside the module. */
  readonly pkg: string;
  readonly version: string;
  readonly tags?: readonly string[];
  /** What the first build makes, said before it starts (README.md's "First run" says how long it takes). */
  readonly cost: string;
}

export const OASDIFF: GoTool = {
  name: 'oasdiff',
  module: 'github.com/oasdiff/oasdiff',
  pkg: 'github.com/oasdiff/oasdiff',
  version: 'v1.36.0',
  cost: 'its binary',
};

/**
 * promtool of Prometheus 3.16 (the module's versions are v0.3xx.y for the 3.x releases). Without its
 * service-discovery plugins (tag remove_all_sd), the cloud SDKs are neither downloaded nor compiled:
 * deploy/prometheus scrapes static targets, which every build keeps.
 */
export const PROMTOOL: GoTool = {
  name: 'promtool',
  module: 'github.com/prometheus/prometheus',
  pkg: 'github.com/prometheus/prometheus/cmd/promtool',
  version: 'v0.316.0',
  tags: ['remove_all_sd'],
  cost: 'its binary (without the service-discovery plugins)',
};

/**
 * Stripe's own API mock: it validates every request against Stripe's published OpenAPI spec, so the
 * Stripe connection's tests (test/support/stripe-mock.ts) check its calls against the real contract.
 */
export const STRIPE_MOCK: GoTool = {
  name: 'stripe-mock',
  module: 'github.com/stripe/stripe-mock',
  pkg: 'github.com/stripe/stripe-mock',
  version: 'v0.203.0',
  cost: "its binary (Stripe's spec and fixtures are embedded in it)",
};

/** Where the tool's binary is once built: under .cache/, or GO_TOOLS_CACHE (a test's empty one, where nothing is built yet). */
export function goToolPath(tool: GoTool): string {
  return join(process.env.GO_TOOLS_CACHE || join(projectRoot(), '.cache'), tool.name, tool.version, tool.name);
}

/** The tool is built, or can be: Go is on PATH. */
export function goToolCanBeHad(tool: GoTool): boolean {
  return existsSync(goToolPath(tool)) || spawnSync('sh', ['-c', 'command -v go']).status === 0;
}

/** The tool's binary, built first when it is not there yet (saying so, and every 30 s while it builds). */
export async function ensureGoTool(tool: GoTool): Promise<string> {
  const binary = goToolPath(tool);
  if (existsSync(binary)) return binary;
  const dir = join(binary, '..');
  console.error(
    `building ${tool.name} ${tool.version} (first run only): downloading ${tool.module} and its Go module dependencies ` +
      `from the Go module proxy (kept in the Go module cache), then compiling ${tool.cost} into ${relative(projectRoot(), dir)}/ ...`,
  );
  const started = performance.now();
  const seconds = () => Math.round((performance.now() - started) / 1000);
  const ticker = setInterval(() => console.error(`  still building ${tool.name} (${seconds()} s)`), 30_000);
  const tags = tool.tags ? ['-tags', tool.tags.join(',')] : [];
  try {
    await run('go', ['install', ...tags, `${tool.pkg}@${tool.version}`], {
      // -modcacherw: the module cache stays deletable by its owner, as `rm -rf` of a temporary HOME needs.
      env: { ...process.env, GOBIN: dir, GOFLAGS: '-modcacherw' },
      maxBuffer: 16 * 1024 * 1024,
    });
  } finally {
    clearInterval(ticker);
  }
  console.error(`${tool.name} built in ${seconds()} s`);
  return binary;
}

/** How to get Go, for the line that says a step was skipped without it. */
export const INSTALL_GO = "install Go (https://go.dev/dl/, or Debian's golang-go), then run it again";
