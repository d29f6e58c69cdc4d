// Every flag the README and the guides of docs/ show for a command is in that command's --help. Each page
// is read for: command headings ("### `cardboard card put [--id ID] …`", "### `webhook listen`"), a flag
// table under such a heading, and every command line of a sh/console code block (synopses such as
// import's, examples). Global options are part of every command's help (its "Global Options:").
import type { Command } from 'commander';
import { beforeAll, describe, expect, it } from 'vitest';
import { createContext } from '../../src/context.js';
import { buildProgram } from '../../src/program.js';
import { runMain } from '../helpers/cli.js';
import { docPages, readPage } from '../helpers/docs-pages.js';

/** A place in a page that names flags of one command. */
export interface Claim {
  /** The page, from the repository's root. */
  page: string;
  line: number;
  path: string[];
  flags: string[];
  text: string;
}

/** Global options that take a value: their value is not a command word. */
const GLOBAL_VALUES = new Set(['-b', '--board', '--base-url', '--timeout', '--rate']);

const flagsIn = (text: string) => [...new Set([...text.matchAll(/(?<![\w-])--[a-z][a-z0-9-]*/g)].map((m) => m[0]))];

/** The longest command path `words` start with (after global options and their values), or undefined. */
function resolve(tree: Command, words: string[]): string[] | undefined {
  const path: string[] = [];
  let node = tree;
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (w.startsWith('-')) {
      if (path.length === 0 && GLOBAL_VALUES.has(w)) i++;
      if (path.length === 0) continue;
      break;
    }
    const next = node.commands.find((c) => c.name() === w && c.name() !== 'help');
    if (!next) break;
    path.push(w);
    node = next;
  }
  return path.length ? path : undefined;
}

/**
 * The words of a shell command line from `cardboard` on, quotes kept inside words, up to the end of
 * that command (`|`, `;`, `&&`, `>`, `<`, `)`, a comment). In a synopsis, `[...]` and `<...>` are
 * groups whose `|` separates alternatives (`<file | ->`, `[--page N | --all]`).
 */
function commandWords(s: string): string[] {
  const words: string[] = [];
  let word = '';
  let quote = '';
  let depth = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    const opens = c === '[' || (c === '<' && /\S/.test(s[i + 1] ?? ' ') && (word === '' || depth > 0));
    if (!quote && (opens || (depth > 0 && (c === ']' || c === '>')))) {
      depth += opens ? 1 : -1;
      word += c;
      continue;
    }
    if (quote) {
      if (c === quote) quote = '';
      word += c;
      continue;
    }
    if (c === "'" || c === '"') {
      quote = c;
      word += c;
      continue;
    }
    if (depth === 0 && (/[|;&><)]/.test(c) || (c === '#' && word === ''))) break;
    if (/\s/.test(c)) {
      if (word) words.push(word);
      word = '';
      continue;
    }
    word += c;
  }
  if (word) words.push(word);
  return words;
}

/** Every claim of a page about a command's flags. */
export function readmeClaims(readme: string, tree: Command, page = 'README.md'): Claim[] {
  const lines = readme.split('\n');
  const claims: Claim[] = [];
  let fence: string | undefined;
  let section: string[] | undefined;
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i]!;
    const fenceMark = /^```(\w*)/.exec(line);
    if (fenceMark) {
      fence = fence === undefined ? fenceMark[1]! : undefined;
      continue;
    }
    if (fence === undefined) {
      const heading = /^#{2,4} (.*)/.exec(line);
      if (heading) {
        section = undefined;
        for (const [, span] of heading[1]!.matchAll(/`([^`]+)`/g)) {
          const path = resolve(tree, commandWords(span!.replace(/^cardboard /, '')));
          if (path) {
            section = path;
            claims.push({ page, line: i + 1, path, flags: flagsIn(span!), text: line });
          }
        }
        continue;
      }
      // A flag table under a command heading: its first column names that command's flags.
      const row = /^\| *(`--[^|]*)\|/.exec(line);
      if (row && section) claims.push({ page, line: i + 1, path: section, flags: flagsIn(row[1]!), text: line });
      continue;
    }
    if (fence !== 'sh' && fence !== 'console' && fence !== 'bash') continue;
    if (fence === 'console') {
      if (!line.startsWith('$ ')) continue;
      line = line.slice(2);
    }
    if (/^\s*#/.test(line)) continue;
    // A synopsis continued on indented lines, or a line continued with a backslash.
    let text = line;
    while (i + 1 < lines.length && (/\\$/.test(text) || /^\s+\[/.test(lines[i + 1]!))) {
      text = `${text.replace(/\\$/, '')} ${lines[++i]!.trim()}`;
    }
    for (const m of text.matchAll(/(?:^|[\s|;&(])cardboard (?=\S)/g)) {
      const words = commandWords(text.slice(m.index + m[0].length));
      const path = resolve(tree, words);
      if (!path) continue;
      claims.push({ page, line: i + 1, path, flags: flagsIn(words.filter((w) => w.startsWith('-') || w.startsWith('[')).join(' ')), text });
    }
  }
  return claims;
}

/** The flags a command's --help lists (its own options and the global ones). */
export function helpFlags(help: string): Set<string> {
  return new Set([...help.matchAll(/^ {2}(?:-\w, )?(--[a-z][a-z0-9-]*)/gm)].map((m) => m[1]!));
}

/** The pages' flags that are not in the help of their command, one line each. */
async function missingFlags(list: Claim[]): Promise<string[]> {
  const helps = new Map<string, Set<string>>();
  for (const path of new Set(list.map((c) => c.path.join(' ')))) {
    const r = await runMain([...path.split(' '), '--help']);
    expect(r.code, r.stderr).toBe(0);
    helps.set(path, helpFlags(r.stdout));
  }
  return list.flatMap((c) =>
    c.flags.filter((f) => !helps.get(c.path.join(' '))!.has(f)).map((f) => `${c.page}:${c.line} ${f} is not in \`cardboard ${c.path.join(' ')} --help\`: ${c.text.trim()}`),
  );
}

let tree: Command;
let claims: Claim[];

beforeAll(async () => {
  const ctx = createContext({ env: {} });
    tree = await buildProgram(ctx, [], () => ctx, true);
  claims = docPages().flatMap((page) => readmeClaims(readPage(page), tree, page));
});

describe('the README, docs/ and --help', () => {
  it('finds the command headings, synopses and examples of the pages', () => {
    const paths = new Set(claims.map((c) => c.path.join(' ')));
    for (const p of ['schema', 'card put', 'card get', 'card list', 'comment', 'import', 'webhook listen', 'webhook replay', 'webhook send', 'board add', 'emulator', 'completion']) {
      expect(paths, p).toContain(p);
    }
    // import's synopsis block, continuation lines included.
    const synopsis = claims.find((c) => c.path.join(' ') === 'import' && c.flags.includes('--input-format'));
    expect(synopsis?.flags).toEqual(expect.arrayContaining(['--map', '--rate', '--give-up-after', '--empty', '--json']));
    // webhook listen's flag table.
    expect(claims.some((c) => c.path.join(' ') === 'webhook listen' && c.flags.includes('--max-connections'))).toBe(true);
  });

  it("every flag a page names for a command is in that command's --help", async () => {
    expect(await missingFlags(claims)).toEqual([]);
  });

  it('fails on a flag of a page that the help of its command does not list', async () => {
    const readme = [
      '### `cardboard import <file> [--rate N/s] [--no-such-flag]`',
      '| `--json` | ok |',
      '| `--bogus-row` | not a flag of import |',
      '```sh',
      'cardboard -b work card list --fomat csv | cardboard import - --dry-run',
      '```',
    ].join('\n');
    const missing = await missingFlags(readmeClaims(readme, tree));
    expect(missing.map((m) => m.split(' ').slice(0, 2).join(' '))).toEqual([
      'README.md:1 --no-such-flag',
      'README.md:3 --bogus-row',
      'README.md:5 --fomat',
    ]);
  });
});
