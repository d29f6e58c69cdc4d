import type { Command } from 'commander';
import type { Context, ContextRef } from '../../context.js';
import { createStatus } from '../../io/status.js';
import { printTable } from '../../io/table.js';
import { tsvRow } from '../../io/text.js';
import { writeChunk, writeJson } from '../../io/write.js';
import { ADD_A_BOARD } from './stored.js';

/** How `board list` prints. */
export interface BoardListOptions {
  json: boolean;
}

/** One stored board as listed: never a secret, only whether a signing key is stored. */
interface BoardListEntry {
  alias: string;
  id: string;
  baseUrl: string;
  default: boolean;
  signingKey: boolean;
}

const EXAMPLES = `
Never prints a token or signing key. On a terminal: a table, the default marked "*". Piped:
tab-separated rows (alias, id, base URL, "default" or empty) under a header line.

Examples:
  $ cardboard board list
  $ cardboard board list --json | jq -r '.[] | select(.default) | .alias'`;

/** Define `board list` under `parent`; `run` is replaceable so parse tests can spy on the options. */
export function boardListCommand(parent: Command, ctx: ContextRef, run = runBoardList): Command {
  return parent
    .command('list')
    .alias('ls')
    .description('List stored boards (alias, id, base URL, default)')
    .option('--json', 'print a JSON array')
    .addHelpText('after', EXAMPLES)
    .action(async (flags: { json?: boolean }) => {
      await run(ctx(), { json: flags.json ?? false });
    });
}

/** Print the stored boards, sorted by alias. */
export async function runBoardList(ctx: Context, opts: BoardListOptions): Promise<void> {
  const config = await ctx.config.read();
  const entries: BoardListEntry[] = Object.entries(config.boards)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([alias, board]) => ({ alias, id: board.id, baseUrl: board.baseUrl, default: alias === config.defaultBoard, signingKey: board.signingKey !== undefined }));
  if (opts.json) return writeJson(ctx.stdout, entries);
  if (entries.length === 0) {
    createStatus(ctx).info(`No boards stored. ${ADD_A_BOARD}`);
    return;
  }
  if (ctx.stdout.isTTY) {
    const rows = entries.map((e) => [e.default ? '*' : '', e.alias, e.id, e.baseUrl]);
    return printTable(ctx, ['', 'alias', 'board id', 'base URL'], rows, { keep: ['board id'], omittedHint: 'see every column with --json' });
  }
  await writeChunk(ctx.stdout, tsvRow(['alias', 'id', 'baseUrl', 'default']));
  for (const e of entries) await writeChunk(ctx.stdout, tsvRow([e.alias, e.id, e.baseUrl, e.default ? 'default' : '']));
}
