/**
 * The client layer's error types, one per problem `code`, generated from the spec's "Error codes"
 * table (scripts/clients/generate.ts writes them into each package): the codes and their statuses
 * come from the table, each type's name from the `title` the spec's examples give that code.
 */
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';

export interface ProblemCode {
  readonly code: string;
  /** The statuses the table lists for the code, lowest first. */
  readonly statuses: readonly number[];
  /** The type's name in every language, e.g. `InvalidStatusTransitionError`. */
  readonly name: string;
  readonly title: string;
}

/** Titles the spec's examples give each code: `{code: '0030', title: 'Invalid status transition'}`. */
function exampleTitles(document: unknown): Map<string, string> {
  const titles = new Map<string, string>();
  const walk = (node: unknown): void => {
    if (node === null || typeof node !== 'object') return;
    const { code, title } = node as { code?: unknown; title?: unknown };
    if (typeof code === 'string' && /^\d{4}$/.test(code) && typeof title === 'string' && !titles.has(code)) titles.set(code, title);
    for (const value of Object.values(node)) walk(value);
  };
  walk(document);
  return titles;
}

const pascal = (words: string) =>
  words
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0]!.toUpperCase() + w.slice(1).toLowerCase())
    .join('');

/** The table's codes, in code order; a code no example names is called `Problem<code>Error`. */
export function problemCodes(specPath: string): ProblemCode[] {
  const document = parse(readFileSync(specPath, 'utf8')) as { tags: { name: string; description?: string }[] };
  const table = document.tags.find((t) => t.name === 'Error codes')?.description ?? '';
  const statuses = new Map<string, Set<number>>();
  for (const [, status, code] of table.matchAll(/^\|\s*(\d{3})\s*\|\s*(\d{4})\s*\|/gm)) {
    statuses.set(code!, (statuses.get(code!) ?? new Set()).add(Number(status)));
  }
  if (statuses.size === 0) throw new Error(`${specPath}: no rows in the "Error codes" table`);
  const titles = exampleTitles(document);
  return [...statuses]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([code, set]) => {
      const title = titles.get(code) ?? `Problem ${code}`;
      const base = pascal(title);
      return { code, statuses: [...set].sort(), title, name: base.endsWith('Error') ? base : `${base}Error` };
    });
}

const HEADER = 'Generated from the spec\'s "Error codes" table by scripts/clients/problems.ts: do not edit.';

export function typescriptProblems(codes: readonly ProblemCode[]): string {
  const classes = codes.map(
    ({ code, name, title }) =>
      `/** ${code}: ${title}. */\nexport class ${name} extends ProblemError {\n  static override readonly code = '${code}';\n}`,
  );
  return [
    `// ${HEADER}`,
    "import { ProblemError } from './layer/problem.js';",
    '',
    ...classes.flatMap((c) => [c, '']),
    "/** Each code's error type. */",
    'export const PROBLEM_TYPES: Readonly<Record<string, typeof ProblemError>> = {',
    ...codes.map(({ code, name }) => `  '${code}': ${name},`),
    '};',
    '',
  ].join('\n');
}

export function pythonProblems(codes: readonly ProblemCode[]): string {
  return [
    `"""${HEADER}"""`,
    '',
    'from subsvc_client.layer.problem import ProblemError',
    '',
    ...codes.flatMap(({ code, name, title }) => [
      '',
      `class ${name}(ProblemError):`,
      `    """${code}: ${title}."""`,
      '',
      `    code = "${code}"`,
      '',
    ]),
    '',
    'PROBLEM_TYPES: dict[str, type[ProblemError]] = {',
    ...codes.map(({ code, name }) => `    "${code}": ${name},`),
    '}',
    '',
    `__all__ = [${codes.map(({ name }) => `"${name}"`).join(', ')}, "PROBLEM_TYPES"]`,
    '',
  ].join('\n');
}

export function goProblems(codes: readonly ProblemCode[]): string {
  return [
    `// ${HEADER}`,
    '',
    'package subsvc',
    '',
    ...codes.flatMap(({ code, name, title }) => [
      `// ${name} is the problem ${code}: ${title}.`,
      `type ${name} struct{ *ProblemError }`,
      '',
      `func (e *${name}) Unwrap() error { return e.ProblemError }`,
      '',
    ]),
    "// problemType wraps a problem in its code's error type.",
    'func problemType(p *ProblemError) error {',
    '\tswitch p.Code {',
    ...codes.flatMap(({ code, name }) => [`\tcase "${code}":`, `\t\treturn &${name}{p}`]),
    '\t}',
    '\treturn p',
    '}',
    '',
  ].join('\n');
}

export function javaProblems(codes: readonly ProblemCode[], javaPackage: string): string {
  return [
    `// ${HEADER}`,
    `package ${javaPackage};`,
    '',
    'import java.net.http.HttpHeaders;',
    `import ${javaPackage}.layer.ProblemException;`,
    '',
    '/** One exception per problem code of the spec, each a {@link ProblemException} (an {@link ApiException}). */',
    'public final class Problems {',
    '  private Problems() {}',
    '',
    ...codes.flatMap(({ code, name, title }) => [
      `  /** ${code}: ${title}. */`,
      `  public static final class ${name} extends ProblemException {`,
      `    public static final String CODE = "${code}";`,
      '',
      `    public ${name}(int status, String message, HttpHeaders headers, String body) {`,
      '      super(status, message, headers, body);',
      '    }',
      '  }',
      '',
    ]),
    "  /** An error answer as its code's exception, or a plain {@link ProblemException} for a code not in the table. */",
    '  public static ProblemException of(int status, String message, HttpHeaders headers, String body) {',
    '    switch (ProblemException.codeOf(body)) {',
    ...codes.flatMap(({ code, name }) => [`      case "${code}":`, `        return new ${name}(status, message, headers, body);`]),
    '      default:',
    '        return new ProblemException(status, message, headers, body);',
    '    }',
    '  }',
    '}',
    '',
  ].join('\n');
}
