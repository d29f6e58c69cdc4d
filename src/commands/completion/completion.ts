import { Argument, type Command, Option } from 'commander';
import { cachedFieldNames, resolveSelection } from '../../config/index.js';
import type { Context, ContextRef } from '../../context.js';
import { StoredAliasArgument } from '../board/stored.js';
import { nounSummary } from '../nouns.js';
import { UsageError } from '../../errors.js';
import { terminalText } from '../../io/text.js';
import { renderBash } from './bash.js';
import { renderFish } from './fish.js';
import type { CompletionNode } from './tree.js';
import { renderZsh } from './zsh.js';

/** Builds the whole command tree (every group loaded), handed in by program.ts. */
export type TreeLoader = () => Promise<Command>;

const SHELLS = ['bash', 'zsh', 'fish'] as const;
const LISTS = ['aliases', 'fields'] as const;

/** Define `completion` under `parent`: `tree` builds the whole command tree the script is generated from. */
export function completionCommand(parent: Command, ctx: ContextRef, tree: TreeLoader): Command {
  return parent
    .command('completion')
    .description(nounSummary('completion'))
    .addArgument(new Argument('[shell]', 'the shell to complete in').choices(SHELLS))
    .addOption(new Option('--list <what>', 'print completion words: board aliases, or field names of the cached schema (used by the scripts)').choices(LISTS))
    .addHelpText(
      'after',
      `
Examples:
  $ cardboard completion bash > ~/.local/share/bash-completion/completions/cardboard
  $ cardboard completion zsh > ~/.zfunc/_cardboard    # with fpath+=(~/.zfunc) in ~/.zshrc
  $ cardboard completion fish > ~/.config/fish/completions/cardboard.fish`,
    )
    .action(async (shell: string | undefined, opts: { list?: string }) => {
      if (opts.list !== undefined) return runCompletionList(ctx(), opts.list as (typeof LISTS)[number]);
      if (!shell) {
        throw new UsageError(`Name the shell: cardboard completion ${SHELLS.join('|')}.`);
      }
      return runCompletion(ctx(), shell as (typeof SHELLS)[number], await tree());
    });
}

/** Print the completion script for `shell`, generated from the whole command tree. */
export async function runCompletion(ctx: Context, shell: 'bash' | 'zsh' | 'fish', program: Command): Promise<void> {
  const tree = describe(program);
  const render = { bash: renderBash, zsh: renderZsh, fish: renderFish }[shell];
  ctx.stdout.write(render(tree));
}

/**
 * Words for the scripts, read from local files only (completion must be instant and offline):
 * board aliases from the config, field names from the selected board's cached schema, stale or not.
 */
export async function runCompletionList(ctx: Context, what: 'aliases' | 'fields'): Promise<void> {
  const config = await ctx.config.read();
  if (what === 'aliases') {
    for (const alias of Object.keys(config.boards)) if (listable(alias)) ctx.stdout.write(`${alias}\n`);
    return;
  }
  try {
    const sel = resolveSelection(ctx, config);
    if (!sel.id || !sel.baseUrl) return;
    for (const name of cachedFieldNames(ctx.env, sel.baseUrl.value, sel.id.value)) if (listable(name)) ctx.stdout.write(`${name}\n`);
  } catch {
    // Settings naming two boards: completion stays silent (as it does with no cached schema yet).
  }
}

/**
 * Whether a word can be a completion candidate: the scripts read one word a line, and a shell lists the
 * candidates raw on the terminal, so a name holding anything terminalText would escape (a line break, another
 * control character, a bidi override) is left out (it could not be typed anyway). Everything else is offered
 * as it is; the scripts quote it and never let the shell expand it.
 */
function listable(word: string): boolean {
  return word !== '' && terminalText(word) === word;
}

/**
 * The tree as the scripts need it. Value words come from commander's own `.choices()` of each option and
 * argument, the same list that checks the value and that --help shows.
 */
function describe(cmd: Command): CompletionNode {
  return {
    name: cmd.name(),
    aliases: cmd.aliases(),
    description: cmd.description().split('\n')[0] ?? '',
    options: cmd.options
      .filter((o) => !o.hidden)
      .map((option) => ({
        long: option.long,
        short: option.short,
        description: option.description,
        takesValue: option.required || option.optional,
        ...(option.argChoices ? { choices: [...option.argChoices] } : {}),
      })),
    argumentChoices: cmd.registeredArguments[0]?.argChoices ? [...cmd.registeredArguments[0].argChoices] : [],
    aliasArgument: cmd.registeredArguments[0] instanceof StoredAliasArgument,
    subcommands: cmd.commands.filter((c) => c.name() !== 'help').map(describe),
  };
}
