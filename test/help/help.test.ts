// Every verb's help lists the global options; `help <noun> <verb>` (and `<noun> help
// <verb>`) describe that verb; bare `cardboard` and bare `cardboard <noun>` are help on stdout, exit 0;
// defaults and choices read as values. Run in-process: the same text the binary prints.
import { describe, expect, it } from 'vitest';
import { NOUNS } from '../../src/commands/nouns.js';
import { runMain } from '../helpers/cli.js';

const GLOBALS = ['--board', '--base-url', '--timeout', '--rate', '--insecure', '--verbose', '--quiet'];

/** The lines of one section of a help page ("Options:", "Global Options:"), up to the blank line. */
function section(text: string, title: string): string[] {
  const lines = text.split('\n');
  const at = lines.indexOf(title);
  if (at < 0) return [];
  const end = lines.indexOf('', at);
  return lines.slice(at + 1, end < 0 ? undefined : end);
}

/** The help of a command, joined across commander's wrapped description lines. */
async function help(args: string[]): Promise<string> {
  const r = await runMain(args);
  expect(r.code, r.stderr).toBe(0);
  expect(r.stderr).toBe('');
  return r.stdout;
}

describe('help', () => {
  it("lists the global options in every verb's and noun's help, once, without --version", async () => {
    for (const path of [['card', 'put'], ['card'], ['import'], ['webhook', 'listen'], ['board', 'add'], ['schema']]) {
      const text = await help([...path, '--help']);
      const globals = section(text, 'Global Options:').join('\n');
      for (const flag of GLOBALS) expect(globals, `${path.join(' ')}: ${flag}`).toMatch(new RegExp(`(^|[ ,])${flag}\\b`, 'm'));
      expect(globals).not.toContain('--version');
      expect(text.split('Global Options:').length).toBe(2);
    }
    // The root's own options are its options, not "global" ones.
    const root = await help(['--help']);
    expect(root).not.toContain('Global Options:');
    expect(section(root, 'Options:').join('\n')).toContain('--board');
  });

  it('`help card put`, `card help put` and `card put --help` print the same page; `help card` is the noun', async () => {
    const page = await help(['card', 'put', '--help']);
    expect(page).toMatch(/^Usage: cardboard card put /);
    expect(await help(['help', 'card', 'put'])).toBe(page);
    expect(await help(['card', 'help', 'put'])).toBe(page);
    expect(await help(['-b', 'work', 'help', 'card', 'put'])).toBe(page);
    // Global options after `help` too (the group's module is found and loaded past them).
    expect(await help(['help', '-b', 'work', 'card', 'put'])).toBe(page);
    expect(await help(['help', '--timeout', '5s', 'card', 'put'])).toBe(page);
    const noun = await help(['card', '--help']);
    expect(noun).toMatch(/^Usage: cardboard card /);
    expect(await help(['help', 'card'])).toBe(noun);
    expect(await help(['card', 'help'])).toBe(noun);
    expect(await help(['webhook', 'help', 'listen'])).toMatch(/^Usage: cardboard webhook listen /);
    expect(await help(['help'])).toBe(await help(['--help']));
  });

  it("lists a group's commands first, as gh does: usage, description, commands, options, global options, examples", async () => {
    for (const path of [[], ['card'], ['webhook'], ['board']]) {
      const text = await help(path.length ? [...path, '--help'] : []);
      const lines = text.split('\n');
      const at = (title: string) => lines.indexOf(title);
      expect(at('Commands:'), path.join(' ')).toBeGreaterThan(0);
      expect(at('Commands:')).toBeLessThan(at('Options:'));
      expect(at('Options:')).toBeLessThan(at('Examples:'));
      if (path.length) {
        expect(at('Options:')).toBeLessThan(at('Global Options:'));
        expect(at('Global Options:')).toBeLessThan(at('Examples:'));
      }
      // Only the usage line and the description come before the commands.
      expect(lines.slice(0, at('Commands:')).filter((l) => l !== '')).toHaveLength(2);
    }
    // A verb: its arguments, then its options, then the global ones.
    const put = (await help(['card', 'put', '--help'])).split('\n');
    expect(put.indexOf('Arguments:')).toBeLessThan(put.indexOf('Options:'));
    expect(put.indexOf('Options:')).toBeLessThan(put.indexOf('Global Options:'));
  });

  it('bare `cardboard` and bare `cardboard <noun>` print help on stdout and exit 0', async () => {
    expect(await help([])).toBe(await help(['--help']));
    for (const noun of ['card', 'webhook', 'board']) {
      const r = await runMain([noun]);
      expect(r.code, noun).toBe(0);
      expect(r.stderr).toBe('');
      expect(r.stdout).toBe(await help([noun, '--help']));
    }
    expect((await runMain(['-b', 'work', 'card'])).code).toBe(0);
  });

  it('an unknown verb or help topic still exits 2 with a did-you-mean, nothing on stdout', async () => {
    for (const [args, wrong, meant] of [
      [['card', 'lst'], 'lst', 'list'],
      [['crad'], 'crad', 'card'],
      [['help', 'crad'], 'crad', 'card'],
      [['help', 'card', 'pt'], 'pt', 'put'],
      [['card', 'help', 'lsit'], 'lsit', 'list'],
    ] as const) {
      const r = await runMain([...args]);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain(`unknown command '${wrong}'`);
      expect(r.stderr).toMatch(new RegExp(`[Dd]id you mean ${meant}\\?`));
    }
    const leaf = await runMain(['help', 'card', 'put', 'more']);
    expect(leaf.code).toBe(2);
    expect(leaf.stderr).toContain("'cardboard card put' has no subcommand 'more'");
  });

  it('shows defaults as values, no empty-list default, and choices', async () => {
    const text = (await help(['import', '--help'])).replace(/\n {10,}/g, ' ');
    expect(text).toContain('(default: 1)');
    expect(text).toContain('(default: 15m)');
    expect(text).not.toContain('(default: "');
    expect(text).not.toContain('default: []');
    expect(text).toMatch(/--empty <omit\|send> .*\(choices: omit, send; default: omit\)/);
    const listen = (await help(['webhook', 'listen', '--help'])).replace(/\n {10,}/g, ' ');
    expect(listen).toContain('(0: any free port; default: 8787)');
    expect(listen).toContain('(default: /)');
    const list = (await help(['card', 'list', '--help'])).replace(/\n {10,}/g, ' ');
    expect(list).toContain('(default: table on a terminal, ndjson piped; choices: table, json, ndjson, csv)');
  });

  it('`import --help` lists --rate; `webhook listen --help` names the stored board key as a source', async () => {
    expect(await help(['import', '--help'])).toMatch(/^ {2}--rate <rate>/m);
    const listen = (await help(['webhook', 'listen', '--help'])).replace(/\n {10,}/g, ' ');
    const line = listen.split('\n').find((l) => l.includes('--signing-key-stdin')) ?? '';
    expect(line).toMatch(/stored key/);
    expect(line).toMatch(/CARDBOARD_SIGNING_KEY/);
  });

  it("lists each group with the summary its own --help shows, stated once for both (commands/nouns.ts)", async () => {
    // The root lists the groups without loading them; `<noun> --help` is the group's own module.
    const listed = section(await help(['--help']), 'Commands:').join('\n').replace(/\n {10,}/g, ' ').split('\n');
    const rows = listed.map((line) => /^ {2}(\S+)(?: \S+)* {2,}(.*)$/.exec(line)).filter((m) => m && m[1] !== 'help');
    expect(rows.map((m) => m![1])).toEqual(NOUNS.map((n) => n.name));
    for (const { name, summary } of NOUNS) {
      expect(rows.find((m) => m![1] === name)![2], name).toBe(summary);
      // The paragraph under its Usage line, joined across wrapped lines.
      const own = (await help([name, '--help'])).split('\n\n')[1]!.replace(/\n/g, ' ');
      expect(own, name).toBe(summary);
    }
  });

  it('the mirror is said to be a SQLite file or PostgreSQL wherever a help page tells what it is', async () => {
    for (const args of [['mirror', '--help'], ['mirror', 'pull', '--help'], ['webhook', 'listen', '--help'], ['card', 'list', '--help'], ['--help']]) {
      const text = (await help(args)).replace(/\s+/g, ' ');
      expect(text, args.join(' ')).toMatch(/PostgreSQL/);
      expect(text, args.join(' ')).not.toMatch(/mirror \(SQLite\)|in SQLite,/);
    }
  });
});
