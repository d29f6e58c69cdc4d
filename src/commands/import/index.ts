import type { Command } from 'commander';
import type { Context } from '../../context.js';
import { CardboardError } from '../../errors.js';

/** Placeholder until the import commands land: listed in help, says so when run. */
export function register(program: Command, _ctx: Context): void {
  program
    .command('import')
    .description('(not yet available)')
    .allowUnknownOption()
    .argument('[args...]')
    .action(() => {
      throw new CardboardError('`cardboard import` is not yet available in this version.');
    });
}
