/**
 * What the docs page would otherwise fetch from elsewhere or miss: an icon for /favicon.ico, and
 * the console's rendition of the spec, in which optional parameters and path ids carry no example,
 * so that a request sent from the page sends only what the user typed (an example cursor or filter
 * made "List your subscriptions" answer [], and an example id made every read answer 404).
 */

/** A 16×16 pause sign, as an ICO holding one PNG. */
export const FAVICON_ICO = Buffer.from(
  'AAABAAEAEBAAAAEAIABcAAAAFgAAAIlQTkcNChoKAAAADUlIRFIAAAAQAAAAEAgGAAAAH/P/YQAAACNJREFUeNpjYBg0QMFhwX9SMG0NgAFc/FEDRoYBA5MSBwwAAJ7wXyBKDYoJAAAAAElFTkSuQmCC',
  'base64',
);

type Json = Record<string, unknown>;

/**
 * An optional parameter, or a path's id, without the values a console fills in: its example, its
 * default, and an enum's first value (the allowed values move to its description). A schema's $ref
 * is resolved, so that the referenced schema's example goes too. A path parameter names one of the
 * caller's own objects, which no example can be.
 */
function withoutExample(parameter: Json, schemas: Record<string, Json>): Json {
  if ((parameter.required === true && parameter.in !== 'path') || '$ref' in parameter) return parameter;
  const { example: _example, examples: _examples, ...rest } = parameter;
  if (!rest.schema) return rest;
  const schema = rest.schema as Json;
  const resolved = typeof schema.$ref === 'string' ? schemas[schema.$ref.replace('#/components/schemas/', '')]! : schema;
  const { example: _schemaExample, examples: _schemaExamples, default: _default, enum: values, ...plain } = resolved;
  const description = Array.isArray(values)
    ? `${typeof rest.description === 'string' ? rest.description : ''} One of: ${values.join(', ')}.`.trim()
    : rest.description;
  return { ...rest, ...(description === undefined ? {} : { description }), schema: plain };
}

const HTTP_METHODS = new Set(['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace']);

/**
 * The spec as the docs pages show it: npm's `UNLICENSED` (the package's, and so the spec's) says that
 * there is no licence to grant, so a page does not show it as one.
 */
function withoutPlaceholderLicence<T>(spec: T): T {
  const info = (spec as Json).info as Json | undefined;
  const licence = info?.license as Json | undefined;
  if (!licence || (licence.identifier !== 'UNLICENSED' && licence.name !== 'UNLICENSED')) return spec;
  const { license: _license, ...rest } = info!;
  return { ...(spec as Json), info: rest } as T;
}

/** The spec for the console: every optional parameter and path parameter (a component or written in place) without an example or default. */
export function consoleSpec(spec: Json): Json {
  const components = spec.components as Json & { parameters?: Record<string, Json>; schemas?: Record<string, Json> };
  const schemas = components.schemas ?? {};
  const plain = (parameter: Json) => withoutExample(parameter, schemas);
  const parameters = Object.fromEntries(Object.entries(components.parameters ?? {}).map(([name, p]) => [name, plain(p)]));
  const paths = Object.fromEntries(
    Object.entries(spec.paths as Record<string, Json>).map(([path, item]) => [
      path,
      Object.fromEntries(
        Object.entries(item).map(([key, value]) => {
          if (key === 'parameters') return [key, (value as Json[]).map(plain)];
          if (!HTTP_METHODS.has(key)) return [key, value];
          const operation = value as Json;
          return [key, operation.parameters ? { ...operation, parameters: (operation.parameters as Json[]).map(plain) } : operation];
        }),
      ),
    ]),
  );
  return withoutPlaceholderLicence({ ...spec, paths, components: { ...components, parameters } });
}
