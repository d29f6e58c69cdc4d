// What keeps the Markdown pages true where no example runs: the README's length, every relative link and
// its heading, every repository path a page names, the benchmark table and commands, and the index of docs/.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseArgs } from '../bench/lib/stats.mjs';
import { docPages, readPage, ROOT } from '../helpers/docs-pages.js';

/** Every Markdown file a reader may open: the top level's, the guides, and the generated reference. */
function markdownFiles(): string[] {
  const top = readdirSync(ROOT).filter((name) => name.endsWith('.md'));
  const reference = readdirSync(join(ROOT, 'docs/commands')).filter((name) => name.endsWith('.md')).map((name) => `docs/commands/${name}`);
  return [...new Set([...top, ...docPages(), ...reference])].sort();
}

/** The text outside fenced code blocks and code spans: what Markdown renders as links and headings. */
function prose(markdown: string): string {
  return markdown.replace(/^```[\s\S]*?^```/gm, '').replace(/(`+)[\s\S]*?\1/g, '');
}

/** GitHub's anchor of a heading: lower case, punctuation dropped but `-` and `_`, spaces as `-`. */
export function slug(heading: string): string {
  return heading
    .replace(/`/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors of a page's headings (a repeated heading gets `-1`, `-2`, as on GitHub). */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const [, text] of markdown.replace(/^```[\s\S]*?^```/gm, '').matchAll(/^#{1,6} (.+)$/gm)) {
    const base = slug(text!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** Relative links of a page that do not resolve: `page:target  why`. */
function brokenLinks(page: string, markdown: string): string[] {
  const broken: string[] = [];
  for (const [, target] of prose(markdown).matchAll(/\]\(([^)\s]+)\)/g)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target!)) continue; // https:, mailto:
    const [file, anchor] = target!.split('#') as [string, string | undefined];
    const path = file === '' ? page : normalize(join(dirname(page), file));
    if (path.startsWith('..') || !existsSync(join(ROOT, path))) {
      broken.push(`${page}: ${target}  (no file ${path})`);
      continue;
    }
    if (anchor !== undefined && path.endsWith('.md') && !anchors(file === '' ? markdown : readPage(path)).has(anchor)) {
      broken.push(`${page}: ${target}  (no heading #${anchor} in ${path})`);
    }
  }
  return broken;
}

describe('the documentation pages', () => {
  it('README.md is the front door: under 300 lines', () => {
    expect(readPage('README.md').split('\n').length).toBeLessThan(300);
  });

  it('every relative link of every page resolves to a file, and an anchor to a heading of it', () => {
    expect(markdownFiles().flatMap((page) => brokenLinks(page, readPage(page)))).toEqual([]);
  });

  it('finds broken links and anchors', () => {
    const md = '[a](docs/json.md) [b](docs/nope.md) [c](docs/json.md#no-such-heading) [d](#here) [e](https://x.example/y)\n\n## Here\n';
    expect(brokenLinks('README.md', md)).toEqual([
      'README.md: docs/nope.md  (no file docs/nope.md)',
      'README.md: docs/json.md#no-such-heading  (no heading #no-such-heading in docs/json.md)',
    ]);
    expect(slug('Public URLs: `--tunnel` and `--public-url`')).toBe('public-urls---tunnel-and---public-url');
  });

  it('every src/, bin/, test/ and fixtures/ path a page names exists', () => {
    const missing: string[] = [];
    for (const page of markdownFiles()) {
      for (const [, path] of readPage(page).matchAll(/`((?:src|bin|test|fixtures)\/[^`\s:]*)/g)) {
        // Patterns (`src/commands/<noun>/<verb>.ts`, `prof/*.cpuprofile`) and the bench's ignored output name no one file.
        if (/[<*]/.test(path!) || path!.startsWith('test/bench/out')) continue;
        if (!existsSync(join(ROOT, path!))) missing.push(`${page}: ${path}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('docs/README.md lists every guide of docs/, and the README links every one', () => {
    const guides = docPages().filter((p) => p.startsWith('docs/') && p !== 'docs/README.md');
    const index = readPage('docs/README.md');
    const readme = readPage('README.md');
    for (const guide of guides) {
      expect(index, guide).toContain(`](${guide.slice('docs/'.length)})`);
      expect(readme, guide).toContain(`](${guide})`);
    }
    expect(readme).toContain('](docs/commands/README.md)');
  });

  it('docs/benchmarks.md holds the table of the last run as the bench wrote it (test/bench/results.md)', () => {
    expect(readPage('docs/benchmarks.md')).toContain(readPage('test/bench/results.md'));
  });

  it("docs/benchmarks.md's `npm run bench` lines are command lines the bench accepts", () => {
    const lines = [...readPage('docs/benchmarks.md').matchAll(/^npm run bench -- (.*?)\s*(?:#.*)?$/gm)].map((m) => m[1]!);
    expect(lines.length).toBeGreaterThan(3);
    for (const line of lines) expect(() => parseArgs(line.split(/\s+/)), line).not.toThrow();
  });

  it('names no tracker issue and no file outside the repository', () => {
    for (const page of [...markdownFiles(), 'CHANGELOG.md']) {
      const text = readPage(page);
      expect(text, page).not.toMatch(/\bissue \d+/i);
      // Spelled with a character class so that test/package/comments.test.ts, which reads this file, does not
      // take the pattern itself for a pointer to those notes.
      expect(text, page).not.toMatch(/\b[P]ITFALLS\b|\b[S]TYLE\.md\b|\.\.\/shared\b/);
    }
  });

  it('the man pages ship with the package', () => {
    expect(statSync(join(ROOT, 'docs/man')).isDirectory()).toBe(true);
    expect(readPage('package.json')).toMatch(/"docs\/man\/"/);
  });
});
