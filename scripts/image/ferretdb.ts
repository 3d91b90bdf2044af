/**
 * The Dockerfile's `ferretdb` stage (the sandbox's engine): built from the Dockerfile's GO_IMAGE
 * when the engine has it or can pull it; otherwise the tests' own build of the same version and
 * patches (.cache/ferretdb, built once for both: the image check runs beside the tests in CI) takes
 * the stage's place as a build context of that name, which an engine uses instead of a stage so
 * named. That build links the C library dynamically: it runs on the stand-in base, which is the
 * Debian release of this machine (scripts/image/base.ts), where the stage's static build runs anywhere.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { CACHE_DIR } from '../../src/db/embedded.js';
import { ensureFerretdbBinary, FERRETDB_PATCHES, FERRETDB_VERSION } from '../../src/db/ferretdb.js';
import { createLogger } from '../../src/logger.js';
import type { Engine } from './engine.js';

export interface FerretdbStage {
  /** What the build adds to its command line. */
  readonly args: string[];
  /** One line: how the stage is had, and why. */
  readonly description: string;
}

/** `ARG GO_IMAGE=golang:…` in the Dockerfile. */
export function goImage(dockerfile: string): string {
  const image = /^ARG GO_IMAGE=(\S+)$/m.exec(dockerfile)?.[1];
  if (!image) throw new Error('the Dockerfile names no GO_IMAGE default');
  return image;
}

/** The FerretDB version and patches (by name, in order) the Dockerfile's stage builds. */
export function stageRecipe(dockerfile: string): { version: string; patches: string[] } {
  const version = /FerretDB@(v[\d.]+)/.exec(dockerfile)?.[1] ?? 'none';
  const patches = /for name in ([\w\s-]+?); do git apply/.exec(dockerfile)?.[1]?.split(/\s+/) ?? [];
  return { version, patches };
}

export async function resolveFerretdbStage(engine: Engine, root: string): Promise<FerretdbStage> {
  const image = goImage(readFileSync(join(root, 'Dockerfile'), 'utf8'));
  if (engine.attempt(['image', 'inspect', '--format', '{{.Id}}', image]).status === 0)
    return { args: [], description: `built on ${image} (already in ${engine.name}'s store)` };
  const pull = engine.attempt(['pull', '--quiet', image]);
  if (pull.status === 0) return { args: [], description: `built on ${image} (pulled)` };
  const started = Date.now();
  const binary = await ensureFerretdbBinary(CACHE_DIR, createLogger('warn'), { patches: FERRETDB_PATCHES });
  const seconds = ((Date.now() - started) / 1000).toFixed(0);
  return {
    args: ['--build-context', `ferretdb=${dirname(binary)}`],
    description: `the tests' build of FerretDB ${FERRETDB_VERSION} (${seconds} s), given as the stage; ${image} cannot be pulled: ${pull.output.trim().split('\n').at(-1)?.slice(-160) || `exit ${pull.status}`}`,
  };
}
