// The command tree as the completion scripts see it, and the tables the bash and zsh scripts walk.
import { FIELD_TYPES } from '../../import/types.js';

/** One command of the tree, as the completion scripts need it. */
export interface CompletionNode {
  name: string;
  /** Other names the command answers to (`board rm` for `board remove`): followed when typed, never offered. */
  aliases: string[];
  description: string;
  options: { long?: string; short?: string; description: string; takesValue: boolean; choices?: string[] }[];
  /** The words the first argument may be (`completion bash|zsh|fish`), from its `.choices()`. */
  argumentChoices: string[];
  /** The first argument is a stored board alias (`board use <alias>`): the scripts offer the stored ones. */
  aliasArgument: boolean;
  subcommands: CompletionNode[];
}

/** Options whose value is a board alias or a field name, completed from `cardboard completion --list`. */
export const ALIAS_OPTIONS = ['--board', '-b'];
export const FIELD_OPTIONS = ['--map', '--fields', '--match-on', '--skip-column'];
/** `--type Field=T`: a field name and its "=", then one of the types. */
export const TYPE_OPTION = '--type';
export const TYPES = FIELD_TYPES.join(' ');

/**
 * Every command with the words that reach it, once under each name it answers to: `board remove` and
 * `board rm` are two paths to one node, so what follows a typed alias completes as after its name.
 */
export function walk(node: CompletionNode, path: string[] = [], out: { path: string[]; node: CompletionNode }[] = []) {
  out.push({ path, node });
  for (const sub of node.subcommands) {
    for (const name of [sub.name, ...sub.aliases]) walk(sub, [...path, name], out);
  }
  return out;
}

/** The flags of options as typed: long, then short. */
const names = (options: CompletionNode['options']) => options.flatMap((o) => [o.long, o.short]).filter((f): f is string => Boolean(f));

export const flags = (node: CompletionNode) => names(node.options);

/** The words after a command: its subcommands, and at the top `help` (as gh offers it; `card help put` works too). */
const verbs = (node: CompletionNode, top: boolean) => [...node.subcommands.map((s) => s.name), ...(top ? ['help'] : [])];

const valueFlags = (node: CompletionNode) => names(node.options.filter((o) => o.takesValue));

/**
 * Words of the tree go into the scripts inside double quotes: names, flags and choices are ours, and a
 * character a shell would act on there is refused here rather than quoted (a choice is typed as it is).
 */
export function plainWord(word: string): string {
  if (!/^[\w.,:/+@-]+$/.test(word)) throw new Error(`completion: "${word}" is not a plain word`);
  return word;
}

/**
 * The tables both scripts walk: one row per command path, `path|subcommands|flags|flags taking a value`,
 * one per value list, `path|flag|words` (`card list|--format|table json ndjson csv`; the flag `@` for
 * the first argument; the path empty for a global option), and the paths whose argument is a stored
 * board alias (`board use`).
 */
export function tableRows(root: CompletionNode): string {
  const all = walk(root);
  const rows = all.map(
    ({ path, node }) =>
      `    "${[path.join(' '), verbs(node, path.length === 0).join(' '), flags(node).join(' '), valueFlags(node).join(' ')].map((c) => c.split(' ').map((w) => (w ? plainWord(w) : w)).join(' ')).join('|')}"`,
  );
  const values = all.flatMap(({ path, node }) => [
    ...node.options.flatMap((o) => (o.choices ? names([o]).map((f) => [f, o.choices!] as const) : [])),
    ...(node.argumentChoices.length ? [['@', node.argumentChoices] as const] : []),
  ].map(([flag, words]) => `    "${path.join(' ')}|${flag}|${words.map(plainWord).join(' ')}"`));
  const aliasPaths = all.filter(({ node }) => node.aliasArgument).map(({ path }) => `    "${path.map(plainWord).join(' ')}"`);
  return `_cardboard_table=(\n${rows.join('\n')}\n)\n_cardboard_values=(\n${values.join('\n')}\n)\n_cardboard_alias_args=(\n${aliasPaths.join('\n')}\n)`;
}

/**
 * Shell functions the bash and zsh scripts share (the same syntax in both): the row of one command path,
 * split without a subshell into $_cardboard_subs, $_cardboard_opts and $_cardboard_vals (the flags that
 * take a value, its own and the global ones).
 */
export const TABLE_FUNCTIONS = `_cardboard_at() {
  local r row='' globals=''
  for r in "\${_cardboard_table[@]}"; do
    [[ "\${r%%|*}" == "$1" ]] && row="$r"
    [[ "\${r%%|*}" == '' ]] && globals="\${r##*|}"
  done
  row="\${row#*|}"; _cardboard_subs="\${row%%|*}"
  row="\${row#*|}"; _cardboard_opts="\${row%%|*}"; _cardboard_vals="\${row#*|} $globals"
}
# Whether the table has a row for path $1: a verb typed by its name or by an alias (\`board rm\`).
_cardboard_is_path() {
  local r
  for r in "\${_cardboard_table[@]}"; do [[ "\${r%%|*}" == "$1" ]] && return 0; done
  return 1
}
# Whether the argument of the command at path $1 is a stored board alias.
_cardboard_alias_arg() {
  local p
  for p in "\${_cardboard_alias_args[@]}"; do [[ "$p" == "$1" ]] && return 0; done
  return 1
}`;
