/**
 * The packages merchants install, generated from the spec by openapi-generator (scripts/generate.ts
 * writes them and checks them for drift, as it does generated/):
 *   clients/typescript/   @subsvc/client: typescript-fetch, an ES module with .d.ts, no dependency beyond fetch
 *   clients/python/       subsvc-client: the python generator (pydantic models, urllib3)
 *   clients/go/           the Go module subscription-pause-resume/clients/go, package subsvc (the go generator)
 *   clients/java/         com.subsvc:subsvc-client: the java generator, library native (java.net.http, Jackson)
 * Each carries the spec's info.version, and the client layer: hand-written files kept as they are
 * (handWritten below) and its error types generated from the spec's error table (./problems.ts). Their templates and the files left out are in
 * openapi/generator-templates/<generator>/ (README, package.json/pyproject.toml, openapi-generator-ignore).
 */
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parse } from 'yaml';
import { projectRoot } from '../../src/lib/project-root.js';
import { runOpenapiGenerator, clientSpec, TEMPLATES } from '../openapi-generator.js';
import { goProblems, javaProblems, problemCodes, pythonProblems, typescriptProblems, type ProblemCode } from './problems.js';

export const TYPESCRIPT_PACKAGE = '@subsvc/client';
export const PYTHON_PROJECT = 'subsvc-client';
export const PYTHON_MODULE = 'subsvc_client';
/** The Go module's path, under the project's name; the generator's go.mod joins its three parts. */
const GO_MODULE_PATH = { host: 'subscription-pause-resume', user: 'clients', repo: 'go' };
export const GO_MODULE = `${GO_MODULE_PATH.host}/${GO_MODULE_PATH.user}/${GO_MODULE_PATH.repo}`;
/** The Java client's Maven coordinates and package. */
export const JAVA_ARTIFACT = { groupId: 'com.subsvc', artifactId: 'subsvc-client' };
export const JAVA_PACKAGE = 'com.subsvc.client';
const JAVA_FOLDER = `src/main/java/${JAVA_PACKAGE.replaceAll('.', '/')}`;

/** The contract's version, which both packages carry. */
export function specVersion(specPath: string): string {
  return (parse(readFileSync(specPath, 'utf8')) as { info: { version: string } }).info.version;
}

interface Package {
  /** Its folder under clients/. */
  readonly folder: string;
  readonly generator: string;
  readonly properties: (version: string) => string[];
  /** Options of openapi-generator beyond `--additional-properties`. */
  readonly arguments?: readonly string[];
  /** Changes to the client spec this generator needs (scripts/openapi-generator.ts clientSpec). */
  readonly adapt?: (document: Record<string, unknown>) => void;
  /**
   * The client layer's hand-written files and folders in the package (retries, list iterators,
   * webhook verification): copied as they are into what is generated, so that the drift check
   * compares them with themselves and a regeneration keeps them.
   */
  readonly handWritten: readonly string[];
  /** The layer's error types, one per code of the spec's error table: their file in the package, and its text. */
  readonly problems: (codes: readonly ProblemCode[]) => { path: string; text: string };
}

type Schema = { oneOf?: { required?: unknown }[] };

/**
 * The go generator renders a schema whose `oneOf` only lists alternative `required` sets (ids or a
 * filter) as a model that does not compile (its `time` import is lost); the rule stays the
 * service's to check, so the Go client's spec leaves those `oneOf`s out.
 */
function withoutRequiredAlternatives(document: Record<string, unknown>): void {
  const schemas = (document.components as { schemas: Record<string, Schema> }).schemas;
  for (const schema of Object.values(schemas)) {
    if (schema.oneOf?.every((alternative) => Object.keys(alternative).join() === 'required')) delete schema.oneOf;
  }
}

export const PACKAGES: readonly Package[] = [
  {
    folder: 'typescript',
    generator: 'typescript-fetch',
    // The runtime.mustache override adds `override` to one constructor parameter: the project's tests
    // compile src/ under noImplicitOverride (test/contract/consumer.test.ts imports it).
    properties: (version) => ['importFileExtension=.js', `npmName=${TYPESCRIPT_PACKAGE}`, `npmVersion=${version}`],
    handWritten: ['src/layer'],
    problems: (codes) => ({ path: 'src/problems.ts', text: typescriptProblems(codes) }),
  },
  {
    folder: 'python',
    generator: 'python',
    properties: (version) => [`packageName=${PYTHON_MODULE}`, `projectName=${PYTHON_PROJECT}`, `packageVersion=${version}`],
    handWritten: [`${PYTHON_MODULE}/layer`],
    problems: (codes) => ({ path: `${PYTHON_MODULE}/problems.py`, text: pythonProblems(codes) }),
  },
  {
    folder: 'go',
    generator: 'go',
    properties: (version) => ['packageName=subsvc', `packageVersion=${version}`, 'enumClassPrefix=true'],
    arguments: ['--git-host', GO_MODULE_PATH.host, '--git-user-id', GO_MODULE_PATH.user, '--git-repo-id', GO_MODULE_PATH.repo],
    adapt: withoutRequiredAlternatives,
    handWritten: ['layer_client.go', 'layer_list.go', 'layer_problem.go', 'layer_retry.go', 'layer_webhooks.go'],
    problems: (codes) => ({ path: 'problems.go', text: goProblems(codes) }),
  },
  {
    folder: 'java',
    generator: 'java',
    // Java 11+'s own HTTP client (library native), Jackson, jakarta.annotation; no timestamp, so that regeneration is byte-identical.
    properties: (version) => [
      'library=native',
      `groupId=${JAVA_ARTIFACT.groupId}`,
      `artifactId=${JAVA_ARTIFACT.artifactId}`,
      `artifactVersion=${version}`,
      `invokerPackage=${JAVA_PACKAGE}`,
      `apiPackage=${JAVA_PACKAGE}.api`,
      `modelPackage=${JAVA_PACKAGE}.model`,
      'useJakartaEe=true',
      'openApiNullable=false',
      // An optional list left unset is sent as nothing, not as `[]`: a PauseRequest with a schedule
      // would otherwise carry `"subscriptions": []`, an empty bulk request, and be refused (0040).
      'containerDefaultToNull=true',
      'hideGenerationTimestamp=true',
    ],
    handWritten: [`${JAVA_FOLDER}/layer`],
    problems: (codes) => ({ path: `${JAVA_FOLDER}/Problems.java`, text: javaProblems(codes, JAVA_PACKAGE) }),
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
      clientSpec(specPath, scratch, pkg.adapt),
      '-g',
      pkg.generator,
      '-o',
      out,
      '-t',
      templates,
      `--additional-properties=${pkg.properties(specVersion(specPath)).join(',')}`,
      '--global-property',
      'apiDocs=false,modelDocs=false,apiTests=false,modelTests=false',
      ...(pkg.arguments ?? []),
    ]);
    const problems = pkg.problems(problemCodes(specPath));
    writeFileSync(join(out, problems.path), problems.text);
    const committed = join(projectRoot(), 'clients', pkg.folder);
    if (resolve(committed) !== resolve(out)) {
      for (const path of pkg.handWritten) {
        if (!existsSync(join(committed, path))) continue;
        mkdirSync(dirname(join(out, path)), { recursive: true });
        cpSync(join(committed, path), join(out, path), { recursive: true, filter: (from) => !from.includes('__pycache__') });
      }
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
