/**
 * Every object an operation answers says whether it is live or test-mode data (docs/partners.md):
 * each 2xx JSON answer of the spec requires `livemode`, on the object itself or, for a list, on each
 * of its `data` items.
 */
import { describe, expect, it } from 'vitest';
import { loadSpec } from '../../src/lib/spec.js';

type Schema = {
  $ref?: string;
  required?: string[];
  properties?: Record<string, Schema>;
  oneOf?: Schema[];
  items?: Schema;
  type?: string | string[];
};

const spec = loadSpec() as unknown as {
  paths: Record<
    string,
    Record<string, { operationId?: string; responses?: Record<string, Schema & { content?: Record<string, { schema?: Schema }> }> }>
  >;
};

function deref<T extends { $ref?: string }>(value: T): T {
  let found: unknown = value;
  while ((found as { $ref?: string }).$ref)
    found = (found as { $ref: string }).$ref
      .split('/')
      .slice(1)
      .reduce<any>((at, key) => at[key], spec);
  return found as T;
}

/** The schemas that must carry livemode: the answer, each of its alternatives, or a list's items. */
function objectsOf(schema: Schema): Schema[] {
  const s = deref(schema);
  if (s.oneOf) return s.oneOf.flatMap(objectsOf);
  const data = s.properties?.data;
  if (data && deref(data).type === 'array') return objectsOf(deref(data).items!);
  return [s];
}

describe('livemode in the spec', () => {
  it('every 2xx JSON answer of every operation requires livemode on each object it holds', () => {
    const missing: string[] = [];
    for (const item of Object.values(spec.paths)) {
      for (const operation of Object.values(item)) {
        for (const [status, response] of Object.entries(operation.responses ?? {})) {
          const schema = deref(response).content?.['application/json']?.schema;
          if (!status.startsWith('2') || !schema) continue;
          if (objectsOf(schema).some((o) => !o.required?.includes('livemode') || !o.properties?.livemode))
            missing.push(`${operation.operationId} ${status}`);
        }
      }
    }
    expect(missing).toEqual([]);
  });
});
