/**
 * The docs are guides, not diaries (issue 43): no guide over 500 lines (the figures' guides over
 * 250), at most five dates in their prose (dates in code blocks and example payloads do not
 * count), and no heading about runs or rounds. History lives in git and bench/results/.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/lib/project-root.js';

const DOCS = join(projectRoot(), 'docs');
const guides = readdirSync(DOCS)
  .filter((f) => f.endsWith('.md'))
  .map((f) => ({ name: f, text: readFileSync(join(DOCS, f), 'utf8') }));
const FIGURES_GUIDES = new Set(['benchmarks.md', 'performance.md']);

/** The prose of a guide: without fenced code blocks and inline code. */
export const proseOf = (text: string) => text.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
export const datesIn = (prose: string) => prose.match(/\b(?:19|20)\d\d-\d\d-\d\d\b/g) ?? [];

describe('the docs are guides', () => {
  it('no guide is over 500 lines, and benchmarks.md and performance.md are at most 250', () => {
    const tooLong = guides
      .map(({ name, text }) => ({ name, lines: text.split('\n').length - 1, most: FIGURES_GUIDES.has(name) ? 250 : 500 }))
      .filter(({ lines, most }) => lines > most);
    expect(tooLong).toEqual([]);
  });

  it('their prose holds at most five dates, and no heading names a run or a round', () => {
    const dates = guides.flatMap(({ name, text }) => datesIn(proseOf(text)).map((date) => `${name}: ${date}`));
    expect(dates.length, dates.join(', ')).toBeLessThanOrEqual(5);
    const headings = guides.flatMap(({ name, text }) =>
      text
        .split('\n')
        .filter((line) => /^#+ .*\b(runs?|rounds?) \d/i.test(line))
        .map((line) => `${name}: ${line}`),
    );
    expect(headings).toEqual([]);
  });

  it('a date in a code block or in inline code is not prose', () => {
    expect(datesIn(proseOf('On 2026-01-02 it ran.\n```\n2026-03-04\n```\n`2026-05-06`'))).toEqual(['2026-01-02']);
  });
});
