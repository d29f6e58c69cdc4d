import type { Command } from 'commander';
import { type CardboardConfig, storedBoard } from '../../config/store.js';
import type { Context, ContextRef } from '../../context.js';
import { UsageError } from '../../errors.js';
import { createStatus } from '../../io/status.js';

/** Which alias becomes the default board. */
export interface BoardUseOptions {
  alias: string;
}

/** The error for an alias that is not stored, listing the ones that are. */
export function unknownAlias(alias: string, config: CardboardConfig): UsageError {
  const known = Object.keys(config.boards);
  return new UsageError(`No board stored as "${alias}".`, {
    hint: known.length ? `Stored boards: ${known.join(', ')}.` : 'Add one with `cardboard board add <alias> --url <POST URL>`.',
  });
}

/** Define `board use` under `parent`; `run` is replaceable so parse tests can spy on the options. */
export function boardUseCommand(parent: Command, ctx: ContextRef, run = runBoardUse): Command {
  return parent
    .command('use')
    .description('Make a stored board the default')
    .argument('<alias>', 'a stored board alias')
    .addHelpText('after', '\nExamples:\n  $ cardboard board use work')
    .action(async (alias: string) => {
      await run(ctx(), { alias });
    });
}

/** Set the default board; --board and CARDBOARD_BOARD still win over it. */
export async function runBoardUse(ctx: Context, opts: BoardUseOptions): Promise<void> {
  const config = await ctx.config.read();
  if (!storedBoard(config, opts.alias)) throw unknownAlias(opts.alias, config);
  await ctx.config.update((c) => {
    c.defaultBoard = opts.alias;
  });
  createStatus(ctx).success(`Board "${opts.alias}" is now the default.`);
}
