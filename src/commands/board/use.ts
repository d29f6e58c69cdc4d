import type { Command } from 'commander';
import type { Context, ContextRef } from '../../context.js';
import { createStatus } from '../../io/status.js';
import { changeStoredBoard, StoredAliasArgument } from './stored.js';

/** Which alias becomes the default board. */
export interface BoardUseOptions {
  alias: string;
}

/** Define `board use` under `parent`; `run` is replaceable so parse tests can spy on the options. */
export function boardUseCommand(parent: Command, ctx: ContextRef, run = runBoardUse): Command {
  return parent
    .command('use')
    .description('Make a stored board the default')
    .addArgument(new StoredAliasArgument())
    .addHelpText('after', '\nExamples:\n  $ cardboard board use work')
    .action(async (alias: string) => {
      await run(ctx(), { alias });
    });
}

/** Set the default board; --board and CARDBOARD_BOARD still win over it. */
export async function runBoardUse(ctx: Context, opts: BoardUseOptions): Promise<void> {
  await changeStoredBoard(ctx.config, opts.alias, (_board, config) => {
    config.defaultBoard = opts.alias;
  });
  createStatus(ctx).success(`Board "${opts.alias}" is now the default.`);
}
