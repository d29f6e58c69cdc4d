import type { Command } from 'commander';
import type { Context, ContextRef } from '../../context.js';
import { createStatus } from '../../io/status.js';
import { changeStoredBoard, StoredAliasArgument } from './stored.js';

/** Which alias to forget. */
export interface BoardRemoveOptions {
  alias: string;
}

/** Define `board remove` under `parent`; `run` is replaceable so parse tests can spy on the options. */
export function boardRemoveCommand(parent: Command, ctx: ContextRef, run = runBoardRemove): Command {
  return parent
    .command('remove')
    .alias('rm')
    .description('Forget a stored board and its secrets')
    .addArgument(new StoredAliasArgument())
    .addHelpText('after', '\nExamples:\n  $ cardboard board remove old-board')
    .action(async (alias: string) => {
      await run(ctx(), { alias });
    });
}

/** Delete the board from the config; if it was the default, no board is the default any more. */
export async function runBoardRemove(ctx: Context, opts: BoardRemoveOptions): Promise<void> {
  const wasDefault = await changeStoredBoard(ctx.config, opts.alias, (_board, config) => {
    delete config.boards[opts.alias];
    if (config.defaultBoard !== opts.alias) return false;
    delete config.defaultBoard;
    return true;
  });
  const status = createStatus(ctx);
  status.success(`Removed board "${opts.alias}".`);
  if (wasDefault) status.info('No default board now; pick one with `cardboard board use <alias>`.');
}
