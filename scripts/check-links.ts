/**
 * `npm run check:links` (part of `npm run check`): every relative link in README.md and docs/*.md
 * points at a file or folder of the repository, and every `#anchor` at a heading of its target
 * Markdown file, by GitHub's heading slugs. Links with a scheme (https:, mailto:) are not followed:
 * this runs offline. Links inside code (fenced blocks and `spans`) are text, not links.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { projectRoot } from '../src/lib/project-root.js';

/** GitHub's slug of a heading: lower case, punctuation dropped, spaces to hyphens (github-slugger). */
export function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // a link's text
    .replace(/<[^>]+>/g, '') // inline HTML
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
}

/** The lines of a Markdown file outside fenced code blocks, with their 1-based numbers. */
function proseLines(markdown: string): { line: string; number: number }[] {
  const lines: { line: string; number: number }[] = [];
  let fence: string | undefined;
  markdown.split('\n').forEach((line, i) => {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (marker && (fence === undefined || marker.startsWith(fence))) {
      fence = fence === undefined ? marker : undefined;
      return;
    }
    if (fence === undefined) lines.push({ line, number: i + 1 });
  });
  return lines;
}

/** The anchors a Markdown file has: its headings' slugs (repeats get -1, -2, …) and HTML ids. */
export function anchors(markdown: string): Set<string> {
  const found = new Set<string>();
  const seen = new Map<string, number>();
  for (const { line } of proseLines(markdown)) {
    const heading = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading !== undefined) {
      const base = slug(heading);
      const count = seen.get(base) ?? 0;
      seen.set(base, count + 1);
      found.add(count === 0 ? base : `${base}-${count}`);
    }
    for (const m of line.matchAll(/<a\s[^>]*(?:id|name)="([^"]+)"/g)) found.add(m[1]!);
  }
  return found;
}

/** The link targets of a Markdown file, with their line numbers: inline links and reference definitions. */
function links(markdown: string): { target: string; number: number }[] {
  const found: { target: string; number: number }[] = [];
  for (const { line, number } of proseLines(markdown)) {
    const prose = line.replace(/`[^`]*`/g, '``');
    for (const m of prose.matchAll(/\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)/g)) found.push({ target: m[1]!, number });
    const definition = /^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/.exec(prose);
    if (definition) found.push({ target: definition[1]!, number });
  }
  return found;
}

/** Every broken relative link or anchor of the files, as `file:line: target: why` (paths relative to root). */
export function brokenLinks(root: string, files: readonly string[]): string[] {
  const problems: string[] = [];
  const anchorCache = new Map<string, Set<string>>();
  const anchorsOf = (path: string) => {
    if (!anchorCache.has(path)) anchorCache.set(path, anchors(readFileSync(path, 'utf8')));
    return anchorCache.get(path)!;
  };
  for (const file of files) {
    const path = resolve(root, file);
    for (const { target, number } of links(readFileSync(path, 'utf8'))) {
      if (target === '' || /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) continue;
      const hash = target.indexOf('#');
      const pathPart = decodeURIComponent(hash < 0 ? target : target.slice(0, hash));
      const anchor = hash < 0 ? undefined : decodeURIComponent(target.slice(hash + 1));
      const where = `${relative(root, path)}:${number}: ${target}`;
      const linked = pathPart === '' ? path : resolve(dirname(path), pathPart);
      if (!existsSync(linked)) {
        problems.push(`${where}: no such file ${relative(root, linked)}`);
        continue;
      }
      if (anchor !== undefined && linked.endsWith('.md') && !anchorsOf(linked).has(anchor)) {
        problems.push(`${where}: ${relative(root, linked)} has no heading #${anchor}`);
      }
    }
  }
  return problems;
}

/** README.md and every Markdown file of docs/. */
export function documentation(root: string): string[] {
  const docs = readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md'));
  return ['README.md', ...docs.sort().map((f) => join('docs', f))];
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const root = projectRoot();
  const files = documentation(root);
  const problems = brokenLinks(root, files);
  for (const problem of problems) console.error(`broken link: ${problem}`);
  if (problems.length > 0) process.exit(1);
  console.error(`links: every relative link and anchor of ${files.join(', ')} resolves`);
}
