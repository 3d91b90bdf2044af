/**
 * The packages merchants install, generated from the spec by openapi-generator (scripts/generate.ts
 * writes them and checks them for drift, as it does generated/):
 *   clients/typescript/   @subsvc/client: typescript-fetch, an ES module with .d.ts, no dependency beyond fetch
 *   clients/python/       subsvc-client: the python generator (pydantic models, urllib3)
 * Both carry the spec's info.version. Their templates and the files left out are in
 * openapi/generator-templates/<generator>/ (README, package.json/pyproject.toml, openapi-generator-ignore).
 */
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { runOpenapiGenerator, clientSpec, TEMPLATES } from '../openapi-generator.js';

export const TYPESCRIPT_PACKAGE = '@subsvc/client';
export const PYTHON_PROJECT = 'subsvc-client';
export const PYTHON_MODULE = 'subsvc_client';

/** The contract's version, which both packages carry. */
export function specVersion(specPath: string): string {
  return (parse(readFileSync(specPath, 'utf8')) as { info: { version: string } }).info.version;
}

interface Package {
  /** Its folder under clients/. */
  readonly folder: string;
  readonly generator: string;
  readonly properties: (version: string) => string[];
}

export const PACKAGES: readonly Package[] = [
  {
    folder: 'typescript',
    generator: 'typescript-fetch',
    // The runtime.mustache override generated/client uses too: `override` on one constructor parameter.
    properties: (version) => ['importFileExtension=.js', `npmName=${TYPESCRIPT_PACKAGE}`, `npmVersion=${version}`],
  },
  {
    folder: 'python',
    generator: 'python',
    properties: (version) => [`packageName=${PYTHON_MODULE}`, `projectName=${PYTHON_PROJECT}`, `packageVersion=${version}`],
  },
];

/** Writes one package's sources, from the spec at specPath, into out. */
export function generatePackage(pkg: Package, specPath: string, out: string): void {
  const scratch = mkdtempSync(join(tmpdir(), 'subsvc-package-spec-'));
  try {
    const templates = join(TEMPLATES, pkg.generator);
    // The generator keeps an ignore file it finds in its output folder (its --ignore-file-override is not honoured here).
    mkdirSync(out, { recursive: true });
    copyFileSync(join(templates, 'openapi-generator-ignore'), join(out, '.openapi-generator-ignore'));
    runOpenapiGenerator([
      'generate',
      '-i',
      clientSpec(specPath, scratch),
      '-g',
      pkg.generator,
      '-o',
      out,
      '-t',
      templates,
      `--additional-properties=${pkg.properties(specVersion(specPath)).join(',')}`,
      '--global-property',
      'apiDocs=false,modelDocs=false,apiTests=false,modelTests=false',
    ]);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
