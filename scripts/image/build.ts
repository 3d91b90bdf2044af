/**
 * Builds the project's own Dockerfile, unchanged, on the chosen base (`--build-arg NODE_IMAGE`).
 * Docker's image format keeps the Dockerfile's HEALTHCHECK (the OCI format has no place for it).
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ULIMITS, type Engine } from './engine.js';

function npmConfig(key: string): string {
  const value = spawnSync('npm', ['config', 'get', key], { encoding: 'utf8' }).stdout?.trim() ?? '';
  return value === 'null' || value === 'undefined' ? '' : value;
}

/**
 * The build's `npm ci` steps reach the npm registry the way this machine's npm does: its registry,
 * and its CA bundle where it names one (a machine behind a TLS-inspecting proxy). podman mounts
 * them over npm's global configuration folder, /usr/local/etc (which the base already has, so no
 * mount point is left behind), for the RUN steps only; nothing of them is in a layer.
 */
function npmSettingsForBuild(cacheDir: string): string[] {
  const registry = npmConfig('registry');
  const cafile = npmConfig('cafile') || process.env.NODE_EXTRA_CA_CERTS || '';
  const dir = join(cacheDir, 'build-npm');
  mkdirSync(dir, { recursive: true });
  if (cafile) copyFileSync(cafile, join(dir, 'ca.crt'));
  const lines = [registry ? `registry=${registry}` : '', cafile ? 'cafile=/usr/local/etc/ca.crt' : ''].filter(Boolean);
  writeFileSync(join(dir, 'npmrc'), `${lines.join('\n')}\n`);
  return ['--volume', `${dir}:/usr/local/etc:ro`];
}

/** `extra`: what else the build is given (the ferretdb stage's build context, scripts/image/ferretdb.ts). */
export function buildImage(
  engine: Engine,
  root: string,
  base: string,
  tag: string,
  cacheDir: string,
  noCache: boolean,
  extra: readonly string[] = [],
): void {
  const podmanOnly = engine.name === 'podman' ? ['--format', 'docker', ...npmSettingsForBuild(cacheDir)] : [];
  engine.run([
    'build',
    ...podmanOnly,
    ...(noCache ? ['--no-cache'] : []),
    '--network',
    'host',
    ...ULIMITS,
    '--build-arg',
    `NODE_IMAGE=${base}`,
    ...extra,
    '--tag',
    tag,
    '--file',
    join(root, 'Dockerfile'),
    root,
  ]);
}

/** The image's size in bytes, as the engine reports it (its layers, the base's included, uncompressed). */
export function imageSize(engine: Engine, tag: string): number {
  return Number(engine.run(['image', 'inspect', '--format', '{{.Size}}', tag]).trim());
}
