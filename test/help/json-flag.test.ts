// `--json` means the same everywhere: every command that prints data takes it, but one that prints the
// service's own answer as it came. The tree is walked as shell completion builds it (every group loaded), so
// a new command that prints data without `--json` fails here unless it is added, with its reason, to the
// commands that print none or the service's own answer.
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { createContext } from '../../src/context.js';
import { buildProgram } from '../../src/program.js';

const ctx = createContext({ env: {} });

/** Commands that print no data on stdout, so `--json` would have nothing to shape; each with why. */
const NO_DATA = new Map([
  ['board add', 'stores a board; says so on stderr'],
  ['board use', 'changes the default board; says so on stderr'],
  ['board remove', 'removes a stored board; says so on stderr'],
  ['board set-signing-key', 'stores a secret; says so on stderr'],
  ['emulator', 'a server: its export lines and ready line go to stderr, stdout stays empty'],
  ['completion', 'prints a shell script, or words for the shell (--list): input for a shell, not data'],
]);

/** Commands whose data is the service's own answer, printed as it came (JSON already): `--json` would change nothing. */
const AS_SENT = new Map([['api', "prints the service's body exactly as it came (indented on a terminal)"]]);

/** Every command that runs (no subcommands), by the words naming it; `help` commands left out. */
function leaves(cmd: Command, path: string[] = []): { name: string; cmd: Command }[] {
  if (cmd.commands.length === 0) return path.length === 0 ? [] : [{ name: path.join(' '), cmd }];
  return cmd.commands.filter((c) => c.name() !== 'help').flatMap((c) => leaves(c, [...path, c.name()]));
}

describe('--json', () => {
  it('every command that prints data takes --json, a switch; those that print none are listed with why', async () => {
    const all = leaves(await buildProgram(ctx, [], () => ctx, true));
    const withJson = all.filter(({ cmd }) => cmd.options.some((o) => o.long === '--json'));
    for (const { name, cmd } of withJson) {
      const option = cmd.options.find((o) => o.long === '--json')!;
      expect(option.required || option.optional, `${name} --json takes no value`).toBe(false);
      expect(NO_DATA.has(name) || AS_SENT.has(name), `${name} has --json but is listed as printing no data or the service's own answer`).toBe(false);
    }
    const without = all.filter(({ cmd }) => !cmd.options.some((o) => o.long === '--json')).map(({ name }) => name);
    expect(without.sort()).toEqual([...NO_DATA.keys(), ...AS_SENT.keys()].sort());
    expect(withJson.map(({ name }) => name).sort()).toEqual(
      ['board list', 'board show', 'card get', 'card list', 'card put', 'comment', 'import', 'mirror pull', 'mirror status', 'query', 'schema', 'webhook listen', 'webhook replay', 'webhook send'].sort(),
    );
  });
});
