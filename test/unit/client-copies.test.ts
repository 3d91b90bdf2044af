/**
 * The TypeScript client is committed once, as clients/typescript/src/ (scripts/generate.ts writes
 * it; the package builds from it and test/contract/consumer.test.ts imports it): a second copy would be
 * one more thing to regenerate and one more to drift.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/lib/project-root.js';

const root = projectRoot();
const CLIENT = join(root, 'clients', 'typescript', 'src');
/** Installed packages, build output, caches and reports: nothing here is committed. */
const NOT_COMMITTED = new Set(['node_modules', 'dist', '.cache', '.git', 'test-artifacts', '.schemathesis']);

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (NOT_COMMITTED.has(entry.name)) return [];
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return tsFiles(path);
    return entry.isFile() && entry.name.endsWith('.ts') ? [path] : [];
  });
}

describe('the TypeScript client', () => {
  it('has one copy in the repository: no file outside clients/typescript/src/ has the bytes of one of its files', () => {
    const client = new Map(tsFiles(CLIENT).map((path) => [readFileSync(path).toString('base64'), relative(root, path)]));
    expect(client.size).toBeGreaterThan(10);
    const copies = tsFiles(root)
      .filter((path) => !path.startsWith(`${CLIENT}/`))
      .flatMap((path) => {
        const original = client.get(readFileSync(path).toString('base64'));
        return original ? [`${relative(root, path)} = ${original}`] : [];
      });
    expect(copies).toEqual([]);
  });
});
