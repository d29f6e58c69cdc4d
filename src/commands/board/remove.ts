import type { Command } from 'commander';
import { storedBoard } from '../../config/store.js';
import type { Context, ContextRef } from '../../context.js';
import { createStatus } from '../../io/status.js';
import { unknownAlias } from './use.js';

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
    .argument('<alias>', 'a stored board alias')
    .addHelpText('after', '\nExamples:\n  $ cardboard board remove old-board')
    .action(async (alias: string) => {
      await run(ctx(), { alias });
    });
}

/** Delete the board from the config; if it was the default, no board is the default any more. */
export async function runBoardRemove(ctx: Context, opts: BoardRemoveOptions): Promise<void> {
  const config = await ctx.config.read();
  if (!storedBoard(config, opts.alias)) throw unknownAlias(opts.alias, config);
  const wasDefault = config.defaultBoard === opts.alias;
  await ctx.config.update((c) => {
    delete c.boards[opts.alias];
    if (wasDefault) delete c.defaultBoard;
  });
  const status = createStatus(ctx);
  status.success(`Removed board "${opts.alias}".`);
  if (wasDefault) status.info('No default board now; pick one with `cardboard board use <alias>`.');
}
