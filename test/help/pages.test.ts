// Every help page of the command tree, byte for byte, at 80 and 120 columns: the page `cardboard <words>
// --help` prints (the tree a run builds, with only the group its argv names) against the pages recorded in
// help-pages.txt, and against the whole tree's (every group loaded, as shell completion builds it). A
// change to how the tree is built cannot change a page unnoticed; a change to a page on purpose rewrites
// the file (`vitest -u`).
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { createContext } from '../../src/context.js';
import { buildProgram } from '../../src/program.js';
import { runCli } from '../helpers/cli.js';

const WIDTHS = [80, 120];
const ctx = createContext({ env: {} });

/** The page `cmd.outputHelp()` prints at `width` columns (the text added after it included). */
function page(cmd: Command, width: number): string {
  let out = '';
  const saved = cmd.configureOutput();
  cmd.configureOutput({ ...saved, writeOut: (s) => (out += s), getOutHelpWidth: () => width });
  try {
    cmd.outputHelp();
  } finally {
    cmd.configureOutput(saved);
  }
  return out;
}

/** Every command of the tree with the words naming it (`[]` for the root), parents first. */
function commands(cmd: Command, path: string[] = []): { path: string[]; cmd: Command }[] {
  return [{ path, cmd }, ...cmd.commands.flatMap((c) => commands(c, [...path, c.name()]))];
}

/** The command at `path` under `root`. */
function find(root: Command, path: string[]): Command {
  let cmd = root;
  for (const word of path) cmd = cmd.commands.find((c) => c.name() === word)!;
  return cmd;
}

const full = () => buildProgram(ctx, [], () => ctx, true);

describe('help pages', () => {
  it('`cardboard <command> --help` for every command of the tree, at 80 and 120 columns, as recorded', async () => {
    const all = commands(await full());
    expect(all.length).toBeGreaterThan(20);
    const pages: string[] = [];
    for (const { path } of all) {
      const run = await buildProgram(ctx, [...path, '--help'], () => ctx);
      for (const w of WIDTHS) pages.push(`=== cardboard ${[...path, '--help'].join(' ')} (${w} columns)\n${page(find(run, path), w)}`);
    }
    await expect(pages.join('\n')).toMatchFileSnapshot('./help-pages.txt');
  });

  it("a run's tree prints the whole tree's page for every command below the root", async () => {
    // The root's page is not compared: in a run's tree the groups not loaded are listed by name alone, so
    // its column of names is narrower than in the whole tree (`import [options] <file>`).
    const whole = await full();
    for (const { path } of commands(whole).slice(1)) {
      const run = await buildProgram(ctx, [...path, '--help'], () => ctx);
      for (const w of WIDTHS) expect(page(find(run, path), w), `${path.join(' ')} at ${w}`).toBe(page(find(whole, path), w));
    }
  });

  it('the binary prints the recorded root page (80 columns when stdout is no terminal)', async () => {
    const r = await runCli(['--help']);
    expect([r.code, r.stderr, r.stdout]).toEqual([0, '', page(await buildProgram(ctx, ['--help'], () => ctx), 80)]);
  });
});
