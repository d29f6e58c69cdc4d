// Usage errors read as in gh: `error: …`, `Did you mean X?` when a command or flag is close, the hint of
// our own UsageErrors, then the usage line of the command that failed and where its help is; exit 2 and
// nothing on stdout. Run in-process: the same text the binary prints.
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { createContext } from '../../src/context.js';
import { buildProgram } from '../../src/program.js';
import { runMain } from '../helpers/cli.js';

const env = { CARDBOARD_BASE_URL: 'http://127.0.0.1:9', CARDBOARD_BOARD: 'b1', CARDBOARD_TOKEN: 'token-never-used' };

/** The usage lines of the command `words` names. */
const usage = (line: string, words: string) => `Usage: cardboard ${line}\nSee 'cardboard ${words}--help'.\n`;

async function fails(args: string[]): Promise<string> {
  const r = await runMain(args, { env });
  expect(r.code, args.join(' ')).toBe(2);
  expect(r.stdout).toBe('');
  return r.stderr;
}

describe("commander's usage errors", () => {
  it.each([
    [['card', 'lst'], "error: unknown command 'lst'\nDid you mean list?\n", usage('card [options] [command]', 'card ')],
    [['crad'], "error: unknown command 'crad'\nDid you mean card?\n", usage('[options] [command]', '')],
    [['zzzz'], "error: unknown command 'zzzz'\n", usage('[options] [command]', '')],
    [['card', '--bogus'], "error: unknown option '--bogus'\n", usage('card [options] [command]', 'card ')],
    [['card', 'get'], "error: missing required argument 'cardId'\n", usage('card get [options] <cardId>', 'card get ')],
    [['schema', 'extra'], "error: too many arguments for 'schema'. Expected 0 arguments but got 1.\n", usage('schema [options]', 'schema ')],
    [['card', 'list', '--limt', '3'], "error: unknown option '--limt'\nDid you mean --limit?\n", usage('card list [options]', 'card list ')],
    [['card', 'list', '--limt=3'], "error: unknown option '--limt=3'\nDid you mean --limit?\n", usage('card list [options]', 'card list ')],
    [['card', 'list', '--filter', 'Status=Open'], "error: unknown option '--filter'\nDid you mean --where?\n", usage('card list [options]', 'card list ')],
    [['card', 'get', 'x', '--filter'], "error: unknown option '--filter'\n", usage('card get [options] <cardId>', 'card get ')],
    [['card', 'get', 'x', '--verbos'], "error: unknown option '--verbos'\nDid you mean --verbose?\n", usage('card get [options] <cardId>', 'card get ')],
    [
      ['card', 'list', '--format', 'xx'],
      "error: option '--format <format>' argument 'xx' is invalid. Allowed choices are table, json, ndjson, csv.\n",
      usage('card list [options]', 'card list '),
    ],
    [['card', 'list', '--format'], "error: option '--format <format>' argument missing\n", usage('card list [options]', 'card list ')],
    [['board', 'rm'], "error: missing required argument 'alias'\n", usage('board remove|rm [options] <alias>', 'board remove ')],
  ])('%j', async (args, head, tail) => {
    expect(await fails(args)).toBe(head + tail);
  });

  it('a UsageError of a command keeps its hint, before the usage lines', async () => {
    expect(await fails(['card', 'list', '--page', '1.5'])).toBe(`error: --page must be a whole number 0 or more, got "1.5"\n${usage('card list [options]', 'card list ')}`);
    expect(await fails(['completion'])).toBe(`error: Name the shell: cardboard completion bash|zsh|fish.\n${usage('completion [options] [shell]', 'completion ')}`);
    expect(await fails(['help', 'card', 'lsit'])).toBe(`error: unknown command 'lsit' for 'cardboard card'\nDid you mean list?\n${usage('help [options] [command...]', 'help ')}`);
    expect(await fails(['help', 'card', 'zzzz'])).toBe(
      `error: unknown command 'zzzz' for 'cardboard card'\nhint: The commands of cardboard card: get, put, list.\n${usage('help [options] [command...]', 'help ')}`,
    );
  });

  it('every command suggests its own flags and the global ones: a letter dropped from each', async () => {
    const ctx = createContext({ env: {} });
    const leaves: { path: string[]; cmd: Command }[] = [];
    const visit = (cmd: Command, path: string[]) => {
      const subs = cmd.commands.filter((c) => c.name() !== 'help');
      if (subs.length === 0) leaves.push({ path, cmd });
      for (const sub of subs) visit(sub, [...path, sub.name()]);
    };
    visit(await buildProgram(ctx, [], () => ctx, true), []);
    expect(leaves.length).toBeGreaterThan(15);
    for (const { path, cmd } of leaves) {
      // Its own longest flag (else a global one), misspelt by dropping its second-to-last letter.
      const flag = [...cmd.options].map((o) => o.long).filter((l): l is string => Boolean(l && l.length >= 7 && l !== '--help'))[0] ?? '--verbose';
      const typo = flag.slice(0, -2) + flag.slice(-1);
      // Commander checks required options before unknown ones: give those (`webhook replay --to`).
      const required = cmd.options.filter((o) => o.mandatory).flatMap((o) => [o.long!, 'http://127.0.0.1:9/']);
      const stderr = await fails([...path, ...required, typo]);
      expect(stderr.split('\n').slice(0, 2), `${path.join(' ')} ${typo}`).toEqual([`error: unknown option '${typo}'`, `Did you mean ${flag}?`]);
      expect(stderr).toContain(`\nSee 'cardboard ${path.join(' ')} --help'.\n`);
    }
  });
});
