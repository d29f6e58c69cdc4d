// Comments and test titles speak of the code in its own terms. A pointer a contributor cannot follow (a
// ticket number, a notes file kept outside the repository, a path out of it) is refused here: the comment
// states the fact itself. Citations of the service contract's sections ("spec 4.3") are wanted and pass,
// and so does an upstream project's bug report given by its address.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** What is checked: the code, its tests and scripts, and the two root config files. */
const DIRS = ['src', 'test', 'bin', '.ci'];
const ROOT_FILES = ['eslint.config.js', 'vitest.config.ts'];
/**
 * Benchmark output written by runs, not by people; the Node binaries .ci/run fetches (hundreds of MB);
 * and this file, whose patterns name what they refuse.
 */
const SKIPPED = ['test/bench/out', '.ci/.cache', 'test/package/comments.test.ts'];

const OUTSIDE: ReadonlyArray<[RegExp, string]> = [
  [/\bissues? ?#?\d/i, 'an issue number'],
  [/\b(PITFALLS|STYLE)\b/, 'a notes file outside the repository'],
  [/(\.\.\/)+shared\b|\bshared\/(spec|PITFALLS|STYLE)\b/, 'a path outside the repository'],
  [/card-board-service\.md/, "the spec's file (cite its section: spec 4.3)"],
];

interface OutsideReference {
  line: number;
  text: string;
  what: string;
}

/** Every line of `text` that points outside the repository, with what it points to. */
function outsideReferences(text: string): OutsideReference[] {
  const found: OutsideReference[] = [];
  text.split('\n').forEach((line, i) => {
    for (const [pattern, what] of OUTSIDE) {
      if (pattern.test(line)) found.push({ line: i + 1, text: line.trim(), what });
    }
  });
  return found;
}

/** The text files under `root` that are checked, as paths relative to it with `/` separators. */
function checkedFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (rel: string) => {
    if (SKIPPED.includes(rel)) return;
    for (const entry of readdirSync(join(root, rel), { withFileTypes: true })) {
      const child = `${rel}/${entry.name}`;
      if (entry.isDirectory()) {
        if (entry.name !== 'node_modules') walk(child);
      }
      else if (entry.isFile() && !SKIPPED.includes(child)) out.push(child);
    }
  };
  for (const dir of DIRS) {
    try {
      walk(dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
  for (const file of ROOT_FILES) {
    try {
      readFileSync(join(root, file));
      out.push(file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
  return out.sort();
}

/** `file:line  text  (what)` for every reference found under `root`; binary files are skipped. */
function scan(root: string): string[] {
  const report: string[] = [];
  for (const file of checkedFiles(root)) {
    const bytes = readFileSync(join(root, file));
    if (bytes.includes(0)) continue;
    for (const r of outsideReferences(bytes.toString('utf8'))) report.push(`${file}:${r.line}  ${r.text}  (${r.what})`);
  }
  return report;
}

describe('outsideReferences', () => {
  it('finds issue numbers in every spelling used', () => {
    const text = ['// (issue 12)', '// Issue 11 §8: x', "it('Issue #4 works')", '// issues 10 and 11', '// issue12'].join('\n');
    expect(outsideReferences(text).map((r) => [r.line, r.what])).toEqual([
      [1, 'an issue number'],
      [2, 'an issue number'],
      [3, 'an issue number'],
      [4, 'an issue number'],
      [5, 'an issue number'],
    ]);
  });

  it('finds the notes files and paths out of the repository', () => {
    const text = ['// conf is slow (PITFALLS)', '/* STYLE: heavy modules */', '// see ../shared/spec/card-board-service.md', '// shared/STYLE.md'];
    expect(outsideReferences(text.join('\n')).map((r) => `${r.line} ${r.what}`)).toEqual([
      '1 a notes file outside the repository',
      '2 a notes file outside the repository',
      '3 a path outside the repository',
      "3 the spec's file (cite its section: spec 4.3)",
      '4 a notes file outside the repository',
      '4 a path outside the repository',
    ]);
  });

  it('passes spec sections, an upstream bug by its address and ordinary words', () => {
    const text = [
      '// Spec 4.3 rule 4: a POST with an unknown _id creates a card (spec 2.1).',
      '// (github.com/cloudflare/cloudflared/issues/1038)',
      '// A value the listener did not issue is an ordinary header; a shared limit; the style of a table.',
      "const ISSUED = 'x'; // the tissue 3 stays",
    ].join('\n');
    expect(outsideReferences(text)).toEqual([]);
  });
});

describe('the repository points nowhere outside itself', () => {
  it('finds a reference planted in a copy of the layout, and skips test/bench/out', () => {
    const root = mkdtempSync(join(tmpdir(), 'cardboard-comments-'));
    onTestFinished(() => rmSync(root, { recursive: true, force: true }));
    for (const dir of ['src/io', 'test/bench/out', 'bin', '.ci']) mkdirSync(join(root, dir), { recursive: true });
    writeFileSync(join(root, 'src/io/clean.ts'), '// Spec 4.5: pages end at [].\n');
    writeFileSync(join(root, 'src/io/planted.ts'), 'export const x = 1;\n// ora spins at 0 columns (issue 7)\n');
    writeFileSync(join(root, 'test/bench/out/run.txt'), 'issue 9\n');
    writeFileSync(join(root, '.ci/run'), '# see PITFALLS\n');
    writeFileSync(join(root, 'vitest.config.ts'), '// state (issue 9)\n');
    writeFileSync(join(root, 'bin/blob'), Buffer.from([0, 105, 115, 115, 117, 101, 32, 49]));
    expect(checkedFiles(root)).toEqual(['.ci/run', 'bin/blob', 'src/io/clean.ts', 'src/io/planted.ts', 'vitest.config.ts']);
    expect(scan(root)).toEqual([
      '.ci/run:1  # see PITFALLS  (a notes file outside the repository)',
      'src/io/planted.ts:2  // ora spins at 0 columns (issue 7)  (an issue number)',
      'vitest.config.ts:1  // state (issue 9)  (an issue number)',
    ]);
  });

  it('src/, test/, bin/, .ci/ and the root configs cite no issue number, notes file or outside path', () => {
    const files = checkedFiles(ROOT);
    expect(files).toContain('src/main.ts');
    expect(files).toContain('bin/cardboard.js');
    expect(files.some((f) => f.startsWith('test/bench/out/'))).toBe(false);
    expect(scan(ROOT), 'state the fact the pointer stood for instead').toEqual([]);
  });
});
