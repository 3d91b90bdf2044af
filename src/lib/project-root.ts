import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The folder holding package.json and openapi/, whether running from src/ or dist/src/. */
export function projectRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'openapi', 'openapi.yaml'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('cannot find the project root (openapi/openapi.yaml)');
    dir = parent;
  }
  return dir;
}

let version: string | undefined;

/** The service's version, from package.json. */
export function serviceVersion(): string {
  version ??= String((JSON.parse(readFileSync(join(projectRoot(), 'package.json'), 'utf8')) as { version?: string }).version ?? 'unknown');
  return version;
}
