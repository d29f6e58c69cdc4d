import type { Command } from 'commander';
import type { Context } from '../../context.js';
import { CardboardError } from '../../errors.js';

/** Placeholder until the emulator commands land: listed in help, says so when run. */
export function register(program: Command, _ctx: Context): void {
  program
    .command('emulator')
    .description('(not yet available)')
    .allowUnknownOption()
    .argument('[args...]')
    .action(() => {
      throw new CardboardError('`cardboard emulator` is not yet available in this version.');
    });
}
