/**
 * The bulk previews in the spec (docs/design.md §6a): each of their responses declares the headers
 * its bulk operation's response of the same status declares, and their bodies are the bulk
 * operation's without the deprecated `dryRun`.
 */
import { describe, expect, it } from 'vitest';
import { loadSpec } from '../../src/lib/spec.js';

type Node = { $ref?: string } & Record<string, any>;
const spec = loadSpec() as unknown as Node;

function deref(value: Node): Node {
  let found = value;
  while (found.$ref)
    found = found.$ref
      .split('/')
      .slice(1)
      .reduce<Node>((at, key) => at[key], spec);
  return found;
}

const operationAt = (path: string) => spec.paths[path].post as Node;
const bodySchema = (operation: Node) => deref(deref(deref(operation.requestBody).content['application/json'].schema));
const PAIRS = [
  ['/v2/subscriptions/bulk/pause/preview', '/v2/subscriptions/bulk/pause'],
  ['/v2/subscriptions/bulk/resume/preview', '/v2/subscriptions/bulk/resume'],
] as const;

describe('the bulk previews in the spec', () => {
  it.each(PAIRS)('each response of %s declares the headers the same status of %s declares', (previewPath, bulkPath) => {
    const preview = operationAt(previewPath).responses as Record<string, Node>;
    const bulk = operationAt(bulkPath).responses as Record<string, Node>;
    const headersOf = (response: Node) => Object.keys(deref(response).headers ?? {}).sort();
    const statuses = Object.keys(preview);
    expect(statuses).toContain('200');
    expect(statuses.filter((status) => !bulk[status])).toEqual([]);
    expect(Object.fromEntries(statuses.map((s) => [s, headersOf(preview[s]!)]))).toEqual(
      Object.fromEntries(statuses.map((s) => [s, headersOf(bulk[s]!)])),
    );
  });

  it.each(PAIRS)('the body of %s is the body of %s without dryRun, and dryRun is deprecated there', (previewPath, bulkPath) => {
    const previewBody = bodySchema(operationAt(previewPath));
    const bulkBody = bodySchema(operationAt(bulkPath));
    const { dryRun, ...rest } = bulkBody.properties as Record<string, Node>;
    // The same fields with the same schemas; a description may say "would".
    const schemasOf = (properties: Record<string, Node>) =>
      Object.fromEntries(Object.entries(properties).map(([name, p]) => [name, p.$ref]));
    expect(deref(dryRun!).deprecated).toBe(true);
    expect(schemasOf(previewBody.properties)).toEqual(schemasOf(rest));
    expect([previewBody.oneOf, previewBody.additionalProperties]).toEqual([bulkBody.oneOf, false]);
  });
});
