/**
 * How the folders and files of src/ depend on each other, read from the source: one way only (no
 * folder imports one that imports it back, no file either), and `lib/` imports nothing of ours and
 * names nothing of the domain. A file at the root of src/ counts as a folder of its own. And one
 * store per collection: each collection is named by one module only.
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { DOMAIN_PROBLEMS } from '../../src/http/problem.middleware.js';

const SRC = resolve(import.meta.dirname, '../../src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** The folder of src/ a file belongs to (a root file is its own), or undefined outside src/. */
function unitOf(file: string): string | undefined {
  const rel = relative(SRC, file);
  if (rel.startsWith('..')) return undefined;
  const [first, ...rest] = rel.split(sep);
  return rest.length === 0 ? first!.replace(/\.ts$/, '') : first;
}

/** Folder → the folders of src/ it imports (`import`, `export … from` and `import()`, types included). */
function folderGraph(files = sourceFiles(SRC)): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const file of files) {
    const from = unitOf(file)!;
    const targets = graph.get(from) ?? new Set<string>();
    graph.set(from, targets);
    const text = readFileSync(file, 'utf8');
    for (const [, spec] of text.matchAll(/(?:from|import\()\s*'(\.[^']+)'/g)) {
      const to = unitOf(resolve(dirname(file), spec!.replace(/\.js$/, '.ts')));
      if (to !== undefined && to !== from) targets.add(to);
    }
  }
  return graph;
}

/** File → the files under `root` it imports (relative to it; `import`, `export … from` and `import()`, types included). */
function fileGraph(root = SRC): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const file of sourceFiles(root)) {
    const targets = new Set<string>();
    for (const [, spec] of readFileSync(file, 'utf8').matchAll(/(?:from|import\()\s*'(\.[^']+)'/g)) {
      const target = relative(root, resolve(dirname(file), spec!.replace(/\.js$/, '.ts')));
      if (!target.startsWith('..')) targets.add(target);
    }
    graph.set(relative(root, file), targets);
  }
  return graph;
}

/** Every cycle's folders (strongly connected components of more than one folder), by Tarjan's algorithm. */
function cycles(graph: Map<string, Set<string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (node: string) => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (stack.includes(next)) low.set(node, Math.min(low.get(node)!, index.get(next)!));
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      for (let member = stack.pop(); member !== undefined; member = member === node ? undefined : stack.pop()) component.push(member);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}

/** Collection name → the files that name it (`db.collection('x')`, `collection: 'x'`, `X_COLLECTION = 'x'`). */
function collectionOwners(files = sourceFiles(SRC)): Map<string, string[]> {
  const owners = new Map<string, string[]>();
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    const names = new Set(
      [...text.matchAll(/\.collection(?:<[^>]*>)?\(\s*'([^']+)'|collection: '([^']+)'|_COLLECTION = '([^']+)'/g)].map(
        (m) => m[1] ?? m[2] ?? m[3]!,
      ),
    );
    for (const name of names) owners.set(name, [...(owners.get(name) ?? []), relative(SRC, file)]);
  }
  return owners;
}

describe('one store per collection', () => {
  it('each collection is named by one module of src/ only', () => {
    const owners = collectionOwners();
    expect(owners.get('subscriptions')).toEqual([join('subscriptions', 'subscription.document.ts')]);
    expect([...owners].filter(([, files]) => files.length > 1)).toEqual([]);
  });
});

describe('folder dependencies of src/', () => {
  const graph = folderGraph();

  it('has no import cycle between folders', () => {
    expect(cycles(graph)).toEqual([]);
  });

  it('lib/ imports nothing of ours', () => {
    expect([...(graph.get('lib') ?? [])]).toEqual([]);
  });

  it('subscriptions/ depends on no feature built on it: features call it, never the other way', () => {
    const features = ['bulk', 'schedules', 'events', 'webhooks', 'idempotency', 'http'];
    expect([...(graph.get('subscriptions') ?? [])].filter((to) => features.includes(to))).toEqual([]);
  });

  it('db/ imports no folder of ours but lib/ (root modules such as the logger aside)', () => {
    const folders = new Set(
      readdirSync(SRC, { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => e.name),
    );
    expect([...(graph.get('db') ?? [])].filter((to) => folders.has(to) && to !== 'lib')).toEqual([]);
  });

  it("subscriptions/ reads pause-policy/ only through its rules and errors: the policy's store and cache reach it as a PausePolicySource", () => {
    const files = fileGraph();
    const reached = [...files]
      .filter(([file]) => file.startsWith(`subscriptions${sep}`))
      .flatMap(([, targets]) => [...targets].filter((target) => target.startsWith(`pause-policy${sep}`)));
    expect(reached.length).toBeGreaterThan(0);
    expect([...new Set(reached)].filter((target) => !/\.(rules|errors)\.ts$/.test(target))).toEqual([]);
  });

  it('finds a cycle when there is one (the check itself can fail)', () => {
    const withCycle = new Map([
      ['a', new Set(['b'])],
      ['b', new Set(['c'])],
      ['c', new Set(['a'])],
      ['d', new Set(['a'])],
    ]);
    expect(cycles(withCycle)).toEqual([['a', 'b', 'c']]);
  });
});

/** The files of src/ outside subscriptions/ and the composition root (main/) that import a store of subscriptions/, with the stores. */
function storeReaches(files: Map<string, Set<string>>): [string, string[]][] {
  const isStore = (target: string) => /^subscriptions[\\/](?:[\w-]+\.store|subscription\.stores)\.ts$/.test(target);
  return [...files]
    .filter(([file]) => !file.startsWith(`subscriptions${sep}`) && !file.startsWith(`main${sep}`))
    .map(([file, targets]): [string, string[]] => [file, [...targets].filter(isStore)])
    .filter(([, stores]) => stores.length > 0);
}

describe('features call the subscriptions service, not its stores', () => {
  it('no file outside subscriptions/ and main/ imports a store of subscriptions/ (types included)', () => {
    expect(storeReaches(fileGraph())).toEqual([]);
  });

  it('finds a feature that imports a store where there is one (the check itself can fail)', () => {
    const files = new Map([
      [join('bulk', 'bulk.service.ts'), new Set([join('subscriptions', 'subscriptions.store.ts'), join('lib', 'clock.ts')])],
      [join('holds', 'holds.service.ts'), new Set([join('subscriptions', 'subscriptions.service.ts')])],
      [join('main', 'compose-stores.ts'), new Set([join('subscriptions', 'subscription.stores.ts')])],
    ]);
    expect(storeReaches(files)).toEqual([[join('bulk', 'bulk.service.ts'), [join('subscriptions', 'subscriptions.store.ts')]]]);
  });
});

/** The files of src/ (relative) whose text matches `pattern`, with the names its first group caught. */
function matchesIn(files: readonly string[], pattern: RegExp): [string, string[]][] {
  return files
    .map((file): [string, string[]] => [relative(SRC, file), [...readFileSync(file, 'utf8').matchAll(pattern)].map((m) => m[1] ?? m[0])])
    .filter(([, found]) => found.length > 0);
}

describe('file dependencies of src/', () => {
  it('has no import cycle between files, types included', () => {
    expect(cycles(fileGraph())).toEqual([]);
  });

  it('finds a cycle between two files of one folder (the check itself can fail)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'architecture-'));
    try {
      writeFileSync(join(dir, 'a.rules.ts'), "import type { B } from './b.errors.js';\nexport type A = B;\n");
      writeFileSync(join(dir, 'b.errors.ts'), "import type { A } from './a.rules.js';\nexport type B = string;\nexport type C = A;\n");
      writeFileSync(join(dir, 'c.ts'), "import type { A } from './a.rules.js';\nexport type D = A;\n");
      expect(cycles(fileGraph(dir))).toEqual([['a.rules.ts', 'b.errors.ts']]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/**
 * Words that name the service's domain: its tenants and their modes, its resources and features.
 * A module that uses one (in a name, a string or a comment) knows something of the domain.
 */
const DOMAIN_WORDS =
  /\b(?:merchants?|subscriptions?|subscribers?|livemode|test[ -]?modes?|tenants?|portal|webhooks?|bulk|api[ -]?keys?|outbox|pause[ -]?polic(?:y|ies)|subsvc)\b/gi;

/** The domain words of a text, names split into their words first (`byMerchantId`, `subsvc_ready`). */
function domainWords(text: string): string[] {
  const words = text.replace(/([a-z0-9])([A-Z])/g, '$1 $2').replaceAll('_', ' ');
  return [...words.matchAll(DOMAIN_WORDS)].map((m) => m[0]);
}

/** The files (relative to src/) that name a domain word, with the words. */
function domainWordsIn(files: readonly string[]): [string, string[]][] {
  return files
    .map((file): [string, string[]] => [relative(SRC, file), domainWords(readFileSync(file, 'utf8'))])
    .filter(([, found]) => found.length > 0);
}

describe('lib/ knows nothing of the domain', () => {
  it('no file of lib/ names a domain word: a merchant, a subscription, livemode, a portal, a webhook, bulk, an API key', () => {
    expect(domainWordsIn(sourceFiles(join(SRC, 'lib')))).toEqual([]);
  });

  it('finds domain words where there are some, and none in generic code (the check itself can fail)', () => {
    expect(
      domainWords("const byMerchant = (merchantId: string) => livemodeOf(merchantId); // the portal's\nconst m = 'subsvc_ready';"),
    ).toEqual(['Merchant', 'merchant', 'livemode', 'merchant', 'portal', 'subsvc']);
    expect(domainWords('/** Serialises tasks that share a key; a bucket holds tokens. */ export function partsOf() {}')).toEqual([]);
    expect(domainWordsIn(sourceFiles(join(SRC, 'merchants'))).map(([file]) => file)).toContain(join('merchants', 'livemode.ts'));
  });
});

describe('one way to raise an error', () => {
  const files = sourceFiles(SRC);
  const inHttp = (file: string) => relative(SRC, file).split(sep)[0] === 'http';
  const errorClass = /class\s+(\w+)\s+extends\s+\w*Error\b/g;

  it('only src/http/ constructs a ProblemError: services throw named domain errors', () => {
    expect(
      matchesIn(
        files.filter((file) => !inHttp(file)),
        /new\s+ProblemError\b/g,
      ),
    ).toEqual([]);
  });

  it('finds a ProblemError constructed where there is one (the check itself can fail)', () => {
    expect(matchesIn(files.filter(inHttp), /new\s+ProblemError\b/g).map(([file]) => file)).toContain(join('http', 'openapi.ts'));
  });

  it("an Error subclass is declared only in its folder's *.errors.ts (or src/errors.ts)", () => {
    const inErrorsFile = (file: string) => file.endsWith('.errors.ts') || relative(SRC, file) === 'errors.ts';
    expect(
      matchesIn(
        files.filter((file) => !inErrorsFile(file)),
        errorClass,
      ),
    ).toEqual([]);
  });

  it('finds an Error subclass where there is one (the check itself can fail)', () => {
    expect(matchesIn(files, errorClass).map(([file]) => file)).toContain(join('bulk', 'bulk.errors.ts'));
  });

  it('every named domain error has its catalogue entry in src/http/problem.middleware.ts', () => {
    const declared = matchesIn(files, /class (\w+) extends (?:DomainError|InvalidRequestError)\b/g).flatMap(([, names]) => names);
    const mapped = DOMAIN_PROBLEMS.map(([type]) => type.name);
    expect(declared.length).toBeGreaterThan(0);
    expect(declared.filter((name) => !mapped.includes(name))).toEqual([]);
  });
});

describe('one place for each kind of background plumbing', () => {
  const files = sourceFiles(SRC);
  const AGENDA_DOCUMENTS = [join('db', 'agenda-jobs.ts'), join('db', 'job-queue.ts')];
  const agendaTerms = /\b(lockedAt|lastModifiedBy|nextRunAt)\b|from '(agenda|@agendajs\/[\w-]+)'/g;
  const retryLoop = /for\s*\(\s*let\s+(\w*(?:attempt|tries|retry)\w*)\s*=/gi;
  const repeatingTimer = /\bsetInterval\s*\(/g;

  it("only src/db/agenda-jobs.ts and the queue on Agenda's API name Agenda or its job documents' fields", () => {
    expect(matchesIn(files, agendaTerms).filter(([file]) => !AGENDA_DOCUMENTS.includes(file))).toEqual([]);
  });

  it('only src/lib/retry.ts loops over attempts: every retry is one of the named policies of src/retry-policies.ts', () => {
    expect(matchesIn(files, retryLoop).filter(([file]) => file !== join('lib', 'retry.ts'))).toEqual([]);
  });

  it('only src/lib/periodic.ts times background rounds: no setInterval, whose rounds can overlap', () => {
    expect(matchesIn(files, repeatingTimer).filter(([file]) => file !== join('lib', 'periodic.ts'))).toEqual([]);
  });

  it('finds a repeating timer where there is one, and not a one-shot wait (the check itself can fail)', () => {
    expect([...'const t = setInterval(tick, 50); setTimeout(done, 50);'.matchAll(repeatingTimer)].map((m) => m[0])).toEqual([
      'setInterval(',
    ]);
  });

  it('finds Agenda terms and a retry loop where there are some (the checks themselves can fail)', () => {
    expect(matchesIn(files, agendaTerms).map(([file]) => file)).toContain(join('db', 'agenda-jobs.ts'));
    expect(matchesIn(files, retryLoop).map(([file]) => file)).toEqual([join('lib', 'retry.ts')]);
  });
});

/** Every comment of a TypeScript text, found by its tokens (so `//` or `#` inside a string is no comment). */
function commentsOf(text: string): string[] {
  const source = ts.createSourceFile('file.ts', text, ts.ScriptTarget.Latest, false);
  const found = new Map<number, string>();
  const visit = (node: ts.Node) => {
    const ranges = [...(ts.getLeadingCommentRanges(text, node.pos) ?? []), ...(ts.getTrailingCommentRanges(text, node.end) ?? [])];
    for (const range of ranges) found.set(range.pos, text.slice(range.pos, range.end));
    for (const child of node.getChildren(source)) visit(child);
  };
  visit(source);
  return [...found.values()];
}

// A tracker's number means nothing to a reader of this repository, which does not hold the tracker.
const TRACKER_REFERENCE = /\bissues?\s+#?\d+|(?:^|[\s(,])#\d+\b/gi;

/** The files of src/ (relative) whose comments cite a tracker, with the citations. */
function trackerCitations(files: readonly string[]): [string, string[]][] {
  return files
    .map((file): [string, string[]] => [
      relative(SRC, file),
      commentsOf(readFileSync(file, 'utf8')).flatMap((comment) => [...comment.matchAll(TRACKER_REFERENCE)].map((m) => m[0].trim())),
    ])
    .filter(([, found]) => found.length > 0);
}

describe('comments say what and why', () => {
  it('no comment in src/ cites a tracker number ("issue 46", "#12")', () => {
    expect(trackerCitations(sourceFiles(SRC))).toEqual([]);
  });

  it('finds a citation in a comment and none in strings (the check itself can fail)', () => {
    const text = "// see issue 46 §1\nconst color = '#2040a0'; /* and #12 */ const url = 'http://x/#3';\n";
    expect(commentsOf(text).flatMap((comment) => [...comment.matchAll(TRACKER_REFERENCE)].map((m) => m[0].trim()))).toEqual([
      'issue 46',
      '#12',
    ]);
  });
});

/** The files of the one write path of a subscription (docs/design.md, "One write path"). */
const WRITE_PATH = [
  'subscriptions/subscriptions.service.ts',
  'subscriptions/subscriptions.store.ts',
  'subscriptions/subscription.document.ts',
  'subscriptions/grouped-write.ts',
  'subscriptions/bulk-commands.ts',
  'subscriptions/bulk-commands.store.ts',
  'subscriptions/holders.store.ts',
  'subscriptions/hold-commands.ts',
  'subscriptions/due.store.ts',
  'subscriptions/lifecycle.ts',
  'subscriptions/lifecycle.upsert.ts',
  'subscriptions/lifecycle.store.ts',
  'subscriptions/lifecycle.entries.ts',
].map((file) => join(SRC, ...file.split('/')));

/** Each function, method and constructor of a TypeScript text with more than `cap` positional parameters, as `name(n)`. */
function wideFunctions(text: string, cap: number): string[] {
  const source = ts.createSourceFile('file.ts', text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && !ts.isFunctionTypeNode(node) && node.parameters.length > cap) {
      const name =
        node.name && ts.isIdentifier(node.name) ? node.name.text : ts.isConstructorDeclaration(node) ? 'constructor' : 'anonymous';
      found.push(`${name}(${node.parameters.length})`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('sizes that keep the code readable', () => {
  it('no file of src/ is longer than 400 lines', () => {
    const long = sourceFiles(SRC)
      .map((file): [string, number] => [relative(SRC, file), readFileSync(file, 'utf8').split('\n').length - 1])
      .filter(([, lines]) => lines > 400);
    expect(long).toEqual([]);
  });

  it('no function of the write path takes more than 4 positional parameters: more go in an options object', () => {
    const wide = WRITE_PATH.map((file): [string, string[]] => [relative(SRC, file), wideFunctions(readFileSync(file, 'utf8'), 4)]).filter(
      ([, found]) => found.length > 0,
    );
    expect(wide).toEqual([]);
  });

  it('finds a function with too many parameters where there is one (the check itself can fail)', () => {
    expect(wideFunctions('function f(a, b, c, d, e) {}\nclass K { m(a, b) {} constructor(a, b, c, d, e, f) {} }', 4)).toEqual([
      'f(5)',
      'constructor(6)',
    ]);
  });
});
