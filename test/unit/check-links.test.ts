/** The link check of `npm run check` (scripts/check-links.ts): it catches a broken link and a broken anchor, and passes good ones. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { anchors, brokenLinks, documentation, slug } from '../../scripts/check-links.js';

let root: string;
afterEach(() => rmSync(root, { recursive: true, force: true }));

function repository(files: Record<string, string>): string {
  root = mkdtempSync(join(tmpdir(), 'links-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

const GUIDE = [
  '# Operating it',
  '',
  '## What `npm run bench` measures',
  '',
  '## Alerts',
  '',
  '## Alerts',
  '',
  '```sh',
  '# not a heading',
  '```',
  '',
].join('\n');

describe('the link check', () => {
  it('passes links to files, folders and headings that exist, and does not follow URLs or code', () => {
    const dir = repository({
      'README.md': [
        '[guide](docs/guide.md), [its alerts](docs/guide.md#alerts), [the second](docs/guide.md#alerts-1)',
        '[bench](docs/guide.md#what-npm-run-bench-measures) [src](src/) [web](https://example.com/nowhere.md) [top](#title)',
        '# Title',
        '`[not a link](missing.md)`',
        '```md',
        '[not a link either](missing.md)',
        '```',
      ].join('\n'),
      'docs/guide.md': GUIDE,
      'src/index.ts': '',
    });
    expect(brokenLinks(dir, documentation(dir))).toEqual([]);
  });

  it('fails on a link to a missing file and on an anchor no heading has, naming each', () => {
    const dir = repository({
      'README.md': 'See [the guide](docs/gone.md) and [alerts](docs/guide.md#alert).\n',
      'docs/guide.md': GUIDE + '\n[back](../README.md#no-such-heading)\n',
    });
    expect(brokenLinks(dir, documentation(dir))).toEqual([
      'README.md:1: docs/gone.md: no such file docs/gone.md',
      'README.md:1: docs/guide.md#alert: docs/guide.md has no heading #alert',
      'docs/guide.md:13: ../README.md#no-such-heading: README.md has no heading #no-such-heading',
    ]);
  });

  it('makes GitHub’s heading slugs: lower case, punctuation dropped, spaces to hyphens, repeats numbered', () => {
    expect(slug('What `npm run bench` measures')).toBe('what-npm-run-bench-measures');
    expect(slug('The embedded engine: Node, the database, and their limits')).toBe(
      'the-embedded-engine-node-the-database-and-their-limits',
    );
    expect(slug('Guarantees, and the [tests](x.md) that show them')).toBe('guarantees-and-the-tests-that-show-them');
    expect([...anchors(GUIDE)]).toEqual(['operating-it', 'what-npm-run-bench-measures', 'alerts', 'alerts-1']);
  });
});
