/**
 * Which request fields of the spec no code in src/ reads (scripts/check-request-fields.ts): a field
 * added to the spec but read by no handler passes validation and is silently dropped.
 *
 * The spec's types are generated in memory (openapi-typescript, as `npm run generate` does), so a
 * copy of the spec can be checked without touching generated/. src/ is then type-checked against
 * them with the TypeScript compiler, and a field counts as read where the compiler resolves a read
 * to its declaration in the generated types: `x.field`, `x['field']`, `{ field } = x`,
 * `'field' in x`, `{ ...x }` and `Object.keys|values|entries(x)` (these two carry every field on),
 * or `x` handed to a parameter or variable whose own hand-written type names the field (such as
 * `pageRequestOf(query: { limit?: string })`). A field is named by its operation and its place:
 * `body.filter.status`, `query.limit`, `path.subscriptionId`. Header parameters are read by name
 * (`header('Idempotency-Key')`), so a header counts as read where src/ holds its name as a string.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';

export interface UnreadField {
  readonly operationId: string;
  /** `METHOD /path` of the operation. */
  readonly route: string;
  /** `body.<property>[.<property>…]`, `query.<name>`, `path.<name>` or `header.<name>`. */
  readonly field: string;
}

interface SpecDocument {
  readonly paths: Record<string, Record<string, { operationId?: string } | undefined>>;
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];

/** One field of the spec's requests, with where the generated types declare it. */
interface RequestField extends UnreadField {
  readonly declarations: readonly ts.Declaration[];
}

/** Every request field of every operation in `spec` that src/ (under `root`) does not read, in the spec's order. */
export async function unreadRequestFields(spec: object, root: string): Promise<UnreadField[]> {
  const generatedPath = join(root, 'generated', 'openapi.d.ts');
  const program = programWith(root, generatedPath, astToString(await openapiTS(structuredClone(spec) as never)));
  const checker = program.getTypeChecker();
  const fields = requestFields(program, checker, generatedPath, routesOf(spec as SpecDocument));
  const sources = program.getSourceFiles().filter((f) => f.fileName.startsWith(join(root, 'src') + '/'));
  const read = readDeclarations(sources, checker, generatedPath);
  const strings = new Set(sources.flatMap((f) => stringLiteralsOf(f)).map((s) => s.toLowerCase()));
  return fields
    .filter((f) =>
      f.field.startsWith('header.')
        ? !strings.has(f.field.slice('header.'.length).toLowerCase())
        : !f.declarations.some((d) => read.has(d)),
    )
    .map(({ operationId, route, field }) => ({ operationId, route, field }));
}

function routesOf(spec: SpecDocument): Map<string, string> {
  const routes = new Map<string, string>();
  for (const [path, item] of Object.entries(spec.paths))
    for (const method of METHODS) {
      const id = item[method]?.operationId;
      if (id) routes.set(id, `${method.toUpperCase()} ${path}`);
    }
  return routes;
}

/** src/ as `tsc -p tsconfig.json` compiles it, with these generated types in place of generated/openapi.d.ts. */
function programWith(root: string, generatedPath: string, generated: string): ts.Program {
  const config = ts.getParsedCommandLineOfConfigFile(
    join(root, 'tsconfig.json'),
    {},
    { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined },
  );
  if (!config) throw new Error(`${join(root, 'tsconfig.json')} could not be read`);
  const host = ts.createCompilerHost(config.options);
  const getSourceFile = host.getSourceFile.bind(host);
  const readFile = host.readFile.bind(host);
  host.readFile = (name) => (name === generatedPath ? generated : readFile(name));
  host.getSourceFile = (name, language, ...rest) =>
    name === generatedPath ? ts.createSourceFile(name, generated, language, true) : getSourceFile(name, language, ...rest);
  return ts.createProgram(filesUnder(join(root, 'src')), { ...config.options, noEmit: true }, host);
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => join(e.parentPath, e.name));
}

/** The fields the generated `operations` interface gives each operation's parameters and JSON body. */
function requestFields(program: ts.Program, checker: ts.TypeChecker, generatedPath: string, routes: Map<string, string>): RequestField[] {
  const generated = program.getSourceFile(generatedPath)!;
  const operations = generated.statements.find(
    (s): s is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(s) && s.name.text === 'operations',
  );
  if (!operations) throw new Error('the generated types have no `operations` interface');
  const isGenerated = (d: ts.Declaration) => d.getSourceFile().fileName === generatedPath;
  const fields: RequestField[] = [];
  for (const operation of checker.getPropertiesOfType(checker.getTypeAtLocation(operations))) {
    const operationId = operation.name;
    const route = routes.get(operationId) ?? operationId;
    const type = checker.getTypeOfSymbol(operation);
    const add = (field: string, symbol: ts.Symbol) =>
      fields.push({ operationId, route, field, declarations: (symbol.declarations ?? []).filter(isGenerated) });
    const parameters = propertyType(checker, type, 'parameters');
    for (const place of ['path', 'query', 'header']) {
      const placed = parameters && propertyType(checker, parameters, place);
      for (const parameter of placed ? checker.getPropertiesOfType(placed) : []) add(`${place}.${parameter.name}`, parameter);
    }
    const content = propertyType(checker, propertyType(checker, type, 'requestBody'), 'content');
    const body = content && propertyType(checker, content, 'application/json');
    if (body) walkBody(checker, body, 'body', add, isGenerated, new Set());
  }
  return fields;
}

function propertyType(checker: ts.TypeChecker, type: ts.Type | undefined, name: string): ts.Type | undefined {
  const symbol = type && checker.getNonNullableType(type).getProperty(name);
  if (!symbol) return undefined;
  const found = checker.getNonNullableType(checker.getTypeOfSymbol(symbol));
  return found.flags & ts.TypeFlags.Never ? undefined : found;
}

/** A body's properties, and theirs in turn (through arrays, unions and `$ref`s), each once per path. */
function walkBody(
  checker: ts.TypeChecker,
  type: ts.Type,
  path: string,
  add: (field: string, symbol: ts.Symbol) => void,
  isGenerated: (d: ts.Declaration) => boolean,
  seen: Set<ts.Type>,
): void {
  const named = new Set<string>();
  for (const part of objectPartsOf(checker, type)) {
    if (seen.has(part)) continue;
    for (const property of checker.getPropertiesOfType(part)) {
      if (!(property.declarations ?? []).some(isGenerated)) continue;
      const field = `${path}.${property.name}`;
      if (!named.has(field)) add(field, property);
      named.add(field);
      walkBody(checker, checker.getTypeOfSymbol(property), field, add, isGenerated, new Set([...seen, part]));
    }
  }
}

/** The object types a value of `type` may be: nullish, union members and array elements looked through. */
function objectPartsOf(checker: ts.TypeChecker, type: ts.Type, seen = new Set<ts.Type>()): ts.Type[] {
  const plain = checker.getNonNullableType(type);
  if (seen.has(plain)) return [];
  seen.add(plain);
  if (plain.isUnion()) return plain.types.flatMap((t) => objectPartsOf(checker, t, seen));
  if (checker.isArrayType(plain) || checker.isTupleType(plain))
    return checker.getTypeArguments(plain as ts.TypeReference).flatMap((t) => objectPartsOf(checker, t, seen));
  return plain.flags & ts.TypeFlags.Object ? [plain] : [];
}

/** The generated declarations src/ reads (see the module comment for what counts as a read). */
function readDeclarations(sources: readonly ts.SourceFile[], checker: ts.TypeChecker, generatedPath: string): Set<ts.Declaration> {
  const read = new Set<ts.Declaration>();
  const isGenerated = (d: ts.Declaration) => d.getSourceFile().fileName === generatedPath;
  const markSymbol = (symbol: ts.Symbol | undefined) => {
    for (const d of symbol?.declarations ?? []) if (isGenerated(d)) read.add(d);
  };
  const markNamed = (type: ts.Type, name: string) => {
    for (const part of objectPartsOf(checker, type)) markSymbol(part.getProperty(name));
  };
  const markAll = (type: ts.Type, seen = new Set<ts.Type>()) => {
    for (const part of objectPartsOf(checker, type)) {
      if (seen.has(part)) continue;
      seen.add(part);
      for (const property of checker.getPropertiesOfType(part)) {
        if (!(property.declarations ?? []).some(isGenerated)) continue;
        markSymbol(property);
        markAll(checker.getTypeOfSymbol(property), seen);
      }
    }
  };
  /**
   * `expression` handed where another type names some of its fields (a hand-written one, or
   * another schema's): those fields are read. Where it names them by the same declarations, the
   * receiver's own reads of them are what count.
   */
  const markHandedOn = (expression: ts.Expression) => {
    const wanted = checker.getContextualType(expression);
    if (!wanted) return;
    const parts = objectPartsOf(checker, checker.getTypeAtLocation(expression));
    for (const wantedPart of objectPartsOf(checker, wanted))
      for (const taken of checker.getPropertiesOfType(wantedPart))
        for (const part of parts) {
          const given = part.getProperty(taken.name);
          if (given && !(given.declarations ?? []).every((d) => (taken.declarations ?? []).includes(d))) markSymbol(given);
        }
  };
  const visit = (node: ts.Node): void => {
    if (ts.isPropertyAccessExpression(node) || ts.isElementAccessExpression(node)) {
      const name = ts.isPropertyAccessExpression(node)
        ? node.name.text
        : ts.isStringLiteralLike(node.argumentExpression)
          ? node.argumentExpression.text
          : undefined;
      if (name !== undefined && !isAssignedTo(node)) {
        markSymbol(checker.getSymbolAtLocation(ts.isPropertyAccessExpression(node) ? node.name : node.argumentExpression));
        markNamed(checker.getTypeAtLocation(node.expression), name);
      }
    } else if (ts.isBindingElement(node) && ts.isObjectBindingPattern(node.parent)) {
      const pattern = checker.getTypeAtLocation(node.parent);
      const name = node.propertyName ? literalText(node.propertyName) : ts.isIdentifier(node.name) ? node.name.text : undefined;
      if (node.dotDotDotToken) markAll(pattern);
      else if (name !== undefined) markNamed(pattern, name);
    } else if (ts.isSpreadAssignment(node)) {
      markAll(checker.getTypeAtLocation(node.expression));
    } else if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.InKeyword) {
      const name = literalText(node.left);
      if (name !== undefined) markNamed(checker.getTypeAtLocation(node.right), name);
    } else if (ts.isCallExpression(node)) {
      const callee = node.expression.getText();
      if (['Object.keys', 'Object.values', 'Object.entries'].includes(callee) && node.arguments[0])
        markAll(checker.getTypeAtLocation(node.arguments[0]));
      else for (const argument of node.arguments) markHandedOn(argument);
    } else if (ts.isVariableDeclaration(node) && node.type && node.initializer) {
      markHandedOn(node.initializer);
    }
    ts.forEachChild(node, visit);
  };
  for (const source of sources) visit(source);
  return read;
}

function literalText(node: ts.Node): string | undefined {
  return ts.isStringLiteralLike(node) || ts.isIdentifier(node) || ts.isNumericLiteral(node) ? node.text : undefined;
}

/** The target of `x.p = …` is written, not read. */
function isAssignedTo(node: ts.Expression): boolean {
  const { parent } = node;
  return ts.isBinaryExpression(parent) && parent.left === node && parent.operatorToken.kind === ts.SyntaxKind.EqualsToken;
}

function stringLiteralsOf(source: ts.SourceFile): string[] {
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isStringLiteralLike(node)) found.push(node.text);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}
