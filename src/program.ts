// The command tree: global options, and the noun groups, each loaded only when it runs.
import type * as Commander from 'commander';
import type { Help, HelpContext, Option } from 'commander';
import { createRequire } from 'node:module';
import type { ContextRef, SecretsRef } from './context.js';
import type { Host } from './host.js';
import { type NounName, NOUNS } from './commands/nouns.js';
import { UsageError } from './errors.js';
import { parseRate, readDuration } from './units.js';
import { VERSION, VERSION_FLAGS } from './version.js';

// commander is CommonJS: required rather than imported, because importing it from an ES module also loads its
// ES wrapper and scans its source for the names it exports, a few milliseconds of every start-up (`--help`).
const commander = createRequire(import.meta.url)('commander') as typeof Commander;
const { Command } = commander;
type Command = Commander.Command;
/** Commander's own error (what it threw after printing a usage error, the help or the version). */
export const { CommanderError } = commander;

/** The SecretsRef of a tree built outside main (help, the reference, tests): a command that learns a secret is run by main only. */
const noSecrets: SecretsRef = () => {
  throw new Error("the run's secrets are made by main with its context");
};

/** Builds the whole tree (every group loaded): shell completion walks it. */
type TreeLoader = () => Promise<Command>;

/** A command group's module, imported only when the group runs, so start-up stays cheap. */
interface NounModule {
  register(program: Command, ctx: ContextRef, tree: TreeLoader, secrets: SecretsRef): void;
}

/** How to load each group of NOUNS (their names and summaries are in commands/nouns.ts, read without loading them). */
const LOADERS: { [name in NounName]: () => Promise<NounModule> } = {
  board: () => import('./commands/board/index.js'),
  schema: () => import('./commands/schema/index.js'),
  card: () => import('./commands/card/index.js'),
  comment: () => import('./commands/comment/index.js'),
  import: () => import('./commands/import/index.js'),
  webhook: () => import('./commands/webhook/index.js'),
  mirror: () => import('./commands/mirror/index.js'),
  query: () => import('./commands/query/index.js'),
  api: () => import('./commands/api/index.js'),
  emulator: () => import('./commands/emulator/index.js'),
  completion: () => import('./commands/completion/index.js'),
};

/** What argv says before commander parses it (scanArgv). */
interface ArgvWords {
  /**
   * The words that are neither an option nor a global option's value, in order (`import`, `f.csv` in
   * `cardboard -b x import f.csv`). After `--` every word is an operand, and commander still takes the first
   * one as the command (`cardboard -- schema` runs schema, `cardboard -- crad` is an unknown command).
   */
  operands: string[];
  /**
   * The command word: the first operand (`import` in `cardboard -b x import f.csv`), or the one after `help`
   * (`help card put`, `help -b x card`).
   */
  noun: string | undefined;
  /** The global options given, by their long flag (`--verbose` for `-v`, `-qv` or `--verbose`). */
  given: Set<string>;
  /** Help was asked for (`-h`, `--help`, or a cluster of global flags ending in `h`: `-qh`). */
  help: boolean;
}

/**
 * argv read as commander's root reads it, by the root's own option definitions (so a global option added to
 * rootCommand is known here with nothing else to change), without parsing any value: the start-up needs the
 * command word before the tree is built (only that group's module is loaded), the entry point whether the
 * run is help, and the error reporter whether it is verbose when commander never got that far. As commander
 * does: a known option takes its value from the next word or after `=`; a cluster of short flags (`-qv`,
 * `-qb work`, `-bwork`) is read flag by flag until one takes a value (the rest of the word, else the next
 * word) or is unknown (the rest is one unknown option, left to the command: `-qh` asks for help). An
 * unknown option (a command's own, or a typo) is skipped and the words after it are still operands: the
 * group they name is the one loaded, and the command a usage error names (trackCommand).
 */
export function scanArgv(argv: readonly string[], root: Command = rootCommand()): ArgvWords {
  const find = (flag: string) => root.options.find((o) => o.short === flag || o.long === flag);
  // Commander keeps its help option apart from the command's options; its help lists it among them.
  const help = root.createHelp().visibleOptions(root).find((o) => !root.options.includes(o));
  const words: ArgvWords = { operands: [], noun: undefined, given: new Set(), help: false };
  /** Whether the option `option` (just read, at i) takes the next word as its value. */
  const takesNext = (option: Option, i: number) => option.required || (option.optional && i + 1 < argv.length && !isOptionWord(argv[i + 1]!));
  const give = (option: Option) => words.given.add(option.long ?? option.short ?? option.name());
  const unknown = (word: string) => {
    if (word === help?.short || word === help?.long) words.help = true;
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') {
      words.operands.push(...argv.slice(i + 1));
      break;
    }
    if (!isOptionWord(arg)) {
      words.operands.push(arg);
      continue;
    }
    const whole = find(arg);
    if (whole) {
      give(whole);
      if (takesNext(whole, i)) i++;
      continue;
    }
    const eq = arg.indexOf('=');
    if (arg.startsWith('--')) {
      const named = eq > 0 ? find(arg.slice(0, eq)) : undefined;
      if (named && (named.required || named.optional)) give(named);
      else unknown(arg);
      continue;
    }
    let rest = arg.slice(1);
    for (;;) {
      const flag = find(`-${rest[0]}`);
      if (!flag) {
        unknown(`-${rest}`);
        break;
      }
      give(flag);
      rest = rest.slice(1);
      if (rest === '') {
        if (takesNext(flag, i)) i++;
        break;
      }
      // A flag that takes a value takes the rest of the word (`-bwork`).
      if (flag.required || flag.optional) break;
    }
  }
  const [first, second] = words.operands;
  words.noun = first === 'help' ? second : first;
  return words;
}

/** A word commander reads as an option: `-` and a character at least (a lone `-` is an operand, stdin). */
function isOptionWord(word: string): boolean {
  return word.length > 1 && word.startsWith('-');
}

/** The command word of argv (`import` in `cardboard -b x import f.csv`), found without parsing it. */
export function findNoun(argv: readonly string[], root?: Command): string | undefined {
  return scanArgv(argv, root).noun;
}

/**
 * Every command of the tree: a group run without a verb (`cardboard`, `cardboard card`) is asking for help,
 * as in gh: commander calls help({ error: true }) there (stderr, exit 1); this prints it on stdout, exit 0.
 * That is its only call with `error`; an unknown verb still goes through commander's unknown-command error.
 */
class CardboardCommand extends Command {
  override createCommand(name?: string): CardboardCommand {
    return new CardboardCommand(name);
  }

  override help(context?: HelpContext): never;
  override help(cb: (str: string) => string): never;
  override help(context?: HelpContext | ((str: string) => string)): never {
    if (typeof context === 'object' && context.error && this.commands.length > 0) return super.help();
    return super.help(context as HelpContext);
  }
}

/** A default or a choice as the user would type it: `8`, `15m`, `/`; a string only quoted when empty. */
function shownValue(value: unknown): string {
  if (typeof value === 'string') return value === '' ? '""' : value;
  if (Array.isArray(value)) return value.map(shownValue).join(', ');
  return typeof value === 'object' && value !== null ? JSON.stringify(value) : String(value);
}

/**
 * An option's line in every help: its description, then its choices and default as values
 * (`(default: 8)`, not `(default: "8")`); a repeatable option's empty list is no default worth showing.
 * Replaces commander's optionDescription, so every command gets it.
 */
function optionDescription(option: Option): string {
  const extra: string[] = [];
  if (option.argChoices) extra.push(`choices: ${shownValue(option.argChoices)}`);
  const value: unknown = option.defaultValue;
  const empty = value === undefined || (Array.isArray(value) && value.length === 0);
  if (!empty && (option.required || option.optional)) extra.push(`default: ${option.defaultValueDescription ?? shownValue(value)}`);
  if (extra.length === 0) return option.description;
  // One parenthesis per line: a description that ends in its own "(…)" takes the rest inside it.
  return /\)$/.test(option.description) ? `${option.description.slice(0, -1)}; ${extra.join('; ')})` : `${option.description} (${extra.join('; ')})`;
}

/**
 * Every help page in gh's order: usage, description, the commands (a group's reason to be read), the
 * arguments, the command's own options, the global options; the text added after it (examples) follows.
 * Commander's own order puts the global options before the commands. Replaces commander's formatHelp, so
 * every command gets it.
 */
function formatHelp(cmd: Command, helper: Help): string {
  const termWidth = helper.padWidth(cmd, helper);
  const helpWidth = helper.helpWidth ?? 80;
  const item = (term: string, description: string) => helper.formatItem(term, termWidth, description, helper);
  const options = (list: readonly Option[]) =>
    list.map((o) => item(helper.styleOptionTerm(helper.optionTerm(o)), helper.styleOptionDescription(helper.optionDescription(o))));
  const description = helper.commandDescription(cmd);
  return [
    `${helper.styleTitle('Usage:')} ${helper.styleUsage(helper.commandUsage(cmd))}`,
    '',
    ...(description ? [helper.boxWrap(helper.styleCommandDescription(description), helpWidth), ''] : []),
    ...helper.formatItemList(
      'Commands:',
      helper.visibleCommands(cmd).map((sub) => item(helper.styleSubcommandTerm(helper.subcommandTerm(sub)), helper.styleSubcommandDescription(helper.subcommandDescription(sub)))),
      helper,
    ),
    ...helper.formatItemList(
      'Arguments:',
      helper.visibleArguments(cmd).map((a) => item(helper.styleArgumentTerm(helper.argumentTerm(a)), helper.styleArgumentDescription(helper.argumentDescription(a)))),
      helper,
    ),
    ...helper.formatItemList('Options:', options(helper.visibleOptions(cmd)), helper),
    ...(helper.showGlobalOptions ? helper.formatItemList('Global Options:', options(helper.visibleGlobalOptions(cmd)), helper) : []),
  ].join('\n');
}

/** Words of `help [command...]`, resolved from `from`: `cardboard help card put`, `cardboard card help put`. */
function helpCommand(from: Command): void {
  from
    .command('help')
    .description(from.parent ? `display help for a verb, e.g. help ${from.commands[0]?.name() ?? ''}` : 'display help for a command, e.g. help card put')
    .argument('[command...]', 'the command to describe')
    .action(async (words: string[]) => {
      let target = from;
      for (const word of words) {
        const verbs = target.commands.filter((c) => c.name() !== 'help');
        const next = verbs.find((c) => c.name() === word || c.aliases().includes(word));
        if (!next) {
          const path = ['cardboard', ...commandPath(target)].join(' ');
          const { didYouMean } = await import('./did-you-mean.js');
          const suggestion = didYouMean(word, verbs.map((c) => c.name()));
          if (!verbs.length) throw new UsageError(`'${path}' has no subcommand '${word}'`);
          throw new UsageError(`unknown command '${word}' for '${path}'`, {
            suggestion,
            ...(suggestion === undefined ? { hint: `The commands of ${path}: ${verbs.map((c) => c.name()).join(', ')}.` } : {}),
          });
        }
        target = next;
      }
      target.outputHelp();
    });
}

/** The words naming `cmd` after `cardboard`: `['card', 'put']`. */
export function commandPath(cmd: Command): string[] {
  return [cmd, ...commandAncestors(cmd)].filter((c) => c.parent).map((c) => c.name()).reverse();
}

/** Give every group of the tree its `help [command...]` (commander's own takes one word only). */
function addHelpCommands(cmd: Command): void {
  const verbs = cmd.commands.filter((c) => c.name() !== 'help');
  for (const verb of verbs) addHelpCommands(verb);
  if (verbs.length > 0 && !cmd.commands.some((c) => c.name() === 'help')) helpCommand(cmd);
}

/**
 * The root of the tree: its help settings, description, version and global options, the one definition of
 * them (scanArgv reads argv by it too), and nothing of a run. buildProgram adds the output and the groups.
 */
function rootCommand(): CardboardCommand {
  return new CardboardCommand('cardboard')
    // Set before any subcommand is made: each copies its parent's help settings when created. Every
    // command's help lists the global options; --version is left to the root's.
    .configureHelp({
      showGlobalOptions: true,
      optionDescription,
      formatHelp,
      visibleGlobalOptions: (cmd) => commandAncestors(cmd).flatMap((c) => c.options.filter((o) => !o.hidden && o.long !== '--version')),
    })
    .description('Command-line client for the Card Board Service')
    .version(VERSION, VERSION_FLAGS.join(', '), 'print the version')
    .option('-b, --board <alias-or-id>', 'board alias or id (else CARDBOARD_BOARD, else the default board)')
    .option('--base-url <url>', 'service base URL, or a board\'s POST URL (else CARDBOARD_BASE_URL, else the board\'s stored URL)')
    // Parsed here, so every command refuses a bad value (exit 2) even one that sends nothing.
    // Per try (http/core.ts's deadline); the 4 is the default retry policy's maxTries (http/command-policy.ts).
    .option(
      '--timeout <duration>',
      'how long to wait for each try of a request, not the whole command (a failed read is tried up to 4 times), e.g. 30s, 2m or 1h (default 30s; webhook send and replay 60s)',
      (v) => readDuration(v, '--timeout'),
    )
    .option('--rate <rate>', 'cap the request rate for this run, e.g. 2/s or 120/min', (v) => parseRate(v, '--rate'))
    .option('--insecure', 'allow plain http:// to a host that is not loopback')
    .option('-v, --verbose', 'log each request and full error details to stderr')
    .option('-q, --quiet', 'print only data: no progress or status messages')
    .option('--no-pager', 'print long output on a terminal directly instead of through $CARDBOARD_PAGER, $PAGER or less')
    // Off: main's reporter says `Did you mean X?` itself (usageAdvice), for commands and flags alike.
    .showSuggestionAfterError(false)
    .exitOverride()
    .addHelpText(
      'after',
      `
Examples:
  $ cardboard board add work --url https://cards.example.com/api/aptlet/64f1c2e8
  $ cardboard schema
  $ cardboard card list --all --format csv > cards.csv

Exit codes: 0 ok, 1 failure, 2 usage (nothing sent), 3 partial import, 4 auth, 5 done but not as asked
(card put --id made a new card instead of updating it), 130 interrupted, 143 terminated: stopped by
Ctrl-C or SIGTERM, cardboard cleans up and ends by that signal, so a loop or script running it stops too.
Environment: CARDBOARD_BASE_URL, CARDBOARD_BOARD, CARDBOARD_TOKEN, CARDBOARD_SIGNING_KEY,
CARDBOARD_CONFIG_DIR, CARDBOARD_CACHE_DIR, CARDBOARD_PAGER, PAGER, NO_COLOR, CI (never prompt).
A board named by --board or CARDBOARD_BOARD keeps its stored URL, token and key; the variables fill in
what it lacks and beat the default board (docs/boards-and-credentials.md).`,
    );
}

/**
 * Build the program with only the running group's module loaded; the others are listed for help.
 * With `all`, every group is loaded (shell completion walks the whole tree). Help and commander's errors
 * go to the host's streams; an action gets the run's context from `ctx`, which main builds once parsed, and
 * a command that learns a secret the run's registry from `secrets` (main's; outside main, none is needed).
 */
export async function buildProgram(host: Pick<Host, 'stdout' | 'stderr'>, argv: string[], ctx: ContextRef, all = false, secrets: SecretsRef = noSecrets): Promise<Command> {
  const program = rootCommand().configureOutput({
    writeOut: (s) => host.stdout.write(s),
    writeErr: (s) => host.stderr.write(s),
    // Commander's errors quote the arguments (an unknown option, a bad value): main reports each from the
    // CommanderError commander throws next, which holds the same message, escaped like ours. So the
    // escaping (io/text) loads only when there is an error to report, never for help.
    outputError: () => {},
  });
  const wanted = findNoun(argv, program);
  for (const noun of NOUNS) {
    if (all || noun.name === wanted) {
      (await LOADERS[noun.name]()).register(program, ctx, () => buildProgram(host, [], ctx, true, secrets), secrets);
    } else {
      // Listed for help only; running it loads the real module instead.
      // Should findNoun ever miss the word commander picks, the placeholder refuses instead of doing nothing.
      program
        .command(noun.name)
        .description(noun.summary)
        .helpOption(false)
        .allowUnknownOption()
        .allowExcessArguments()
        .action(() => {
          throw new UsageError(`could not tell the command "${noun.name}" from the rest of the command line`, {
            hint: `Put the command first, then its flags: cardboard ${noun.name} [flags] (global flags such as -b may go before it).`,
          });
        });
    }
  }
  addHelpCommands(program);
  return program;
}

/**
 * Keeps track of the command commander is parsing, from the root down (`card`, then `list`): the command a
 * usage error is about, whether commander found it (an unknown flag, a missing argument) or the command's
 * own code did (a UsageError). CommanderError does not say which command failed.
 */
export function trackCommand(program: Command, argv: string[]): () => Command {
  let current = program;
  const follow = (cmd: Command) => {
    if (cmd.commands.length > 0) cmd.hook('preSubcommand', (_parent, sub) => void (current = sub));
    for (const sub of cmd.commands) follow(sub);
  };
  follow(program);
  // A global option's value is checked by the root before any verb is reached (`card get x --timeout 30`):
  // the error is still about the command the user typed, so its usage is found from the words.
  return () => (current === program ? commandOfWords(program, argv) : current);
}

/** The deepest command the words of argv name (`card get` in `card get x --timeout 30`), or the root. */
function commandOfWords(program: Command, argv: string[]): Command {
  let cmd = program;
  for (const word of scanArgv(argv, program).operands) {
    const sub = cmd.commands.find((c) => c.name() === word || c.aliases().includes(word));
    if (!sub) break;
    cmd = sub;
  }
  return cmd;
}

/**
 * What a usage error of `cmd` says after its message, as gh does: the word the user most likely meant
 * (an unknown command or `--flag` of commander's, among those of `cmd` and, for flags, of its groups),
 * then the usage line of `cmd` and where its help is. `err` is commander's error or a UsageError.
 */
export async function usageAdvice(err: Commander.CommanderError | UsageError, cmd: Command): Promise<{ suggestion?: string; usage: string[] }> {
  const usage = [`Usage: ${cmd.createHelp().commandUsage(cmd)}`, `See '${['cardboard', ...commandPath(cmd)].join(' ')} --help'.`];
  if (err instanceof UsageError) return { suggestion: err.suggestion, usage };
  let word: string | undefined;
  let candidates: string[] = [];
  if (err.code === 'commander.unknownCommand') {
    word = cmd.args[0];
    candidates = cmd.createHelp().visibleCommands(cmd).flatMap((c) => [c.name(), ...c.aliases()]);
  } else if (err.code === 'commander.unknownOption') {
    // Commander puts the flag as typed in its message (`error: unknown option '--limt'`); the value of
    // `--limt=3` is no part of the name.
    word = /^error: unknown option '(--.*)'$/s.exec(err.message)?.[1]?.replace(/=.*/s, '');
    candidates = [cmd, ...commandAncestors(cmd)].flatMap((c) => c.createHelp().visibleOptions(c).flatMap((o) => (o.long ? [o.long] : [])));
  }
  if (word === undefined || candidates.length === 0) return { usage };
  const synonym = flagSynonym(word);
  if (synonym !== undefined && candidates.includes(synonym)) return { suggestion: synonym, usage };
  const { didYouMean } = await import('./did-you-mean.js');
  return { suggestion: didYouMean(word, candidates), usage };
}

/**
 * Our flag for one that people bring from other tools and that no spelling distance finds: `--filter`
 * (kubectl, docker, `webhook replay` here) is `--where` where a command filters by an expression.
 */
function flagSynonym(word: string): string | undefined {
  return word === '--filter' ? '--where' : undefined;
}

/** The groups above `cmd`, nearest first, the root last. */
function commandAncestors(cmd: Command): Command[] {
  const out: Command[] = [];
  for (let c = cmd.parent; c; c = c.parent) out.push(c);
  return out;
}

