import type { Command } from 'commander';
import type { Context } from '../../context.js';
import { UsageError } from '../../errors.js';

const SHELLS = ['bash', 'zsh', 'fish'] as const;
const LISTS = ['aliases', 'fields'] as const;

/** `cardboard completion bash|zsh|fish`, and the `--list` lookups the scripts call while completing. */
export function register(program: Command, ctx: Context): void {
  program
    .command('completion')
    .description('Print a shell completion script (commands, flags, board aliases, field names)')
    .argument('[shell]', 'bash, zsh or fish')
    .option('--list <what>', 'print completion words: aliases, or fields of the cached schema (used by the scripts)')
    .addHelpText(
      'after',
      `
Examples:
  $ cardboard completion bash > ~/.local/share/bash-completion/completions/cardboard
  $ cardboard completion zsh > ~/.zfunc/_cardboard    # with fpath+=(~/.zfunc) in ~/.zshrc
  $ cardboard completion fish > ~/.config/fish/completions/cardboard.fish`,
    )
    .action(async (shell: string | undefined, opts: { list?: string }) => {
      const run = await import('./run.js');
      if (opts.list !== undefined) {
        if (!(LISTS as readonly string[]).includes(opts.list)) {
          throw new UsageError(`--list takes one of: ${LISTS.join(', ')}.`);
        }
        return run.runCompletionList(ctx, opts.list as (typeof LISTS)[number]);
      }
      if (!shell || !(SHELLS as readonly string[]).includes(shell)) {
        throw new UsageError(`Name the shell: cardboard completion ${SHELLS.join('|')}.`);
      }
      return run.runCompletion(ctx, shell as (typeof SHELLS)[number]);
    });
}
