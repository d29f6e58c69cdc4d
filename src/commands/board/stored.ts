// The board verbs' one path to a stored board: read the config, find the alias (one not-found error for
// every verb), change it, write it back. The alias is a user's string: looked up with storedBoard, own keys only.
import { Argument } from 'commander';
import { aliasAdvice } from '../../config/resolve.js';
import { type CardboardConfig, type ConfigStore, type StoredBoard, storedBoard } from '../../config/store.js';
import { UsageError } from '../../errors.js';

/**
 * The `<alias>` argument of a verb that takes a stored board (use, remove, set-signing-key): shell
 * completion offers the stored aliases for it (commands/completion), where it would offer file names.
 */
export class StoredAliasArgument extends Argument {
  constructor() {
    super('<alias>', 'a stored board alias');
  }
}

/** What to do when no board is stored at all (`board list`, and the not-found error then). */
export const ADD_A_BOARD = 'Add one with `cardboard board add <alias> --url <POST URL>`.';

/** The error for an alias that is not stored: the closest stored alias when one is near, else the stored ones. */
function unknownAlias(alias: string, config: CardboardConfig): UsageError {
  const { suggestion, stored } = aliasAdvice(alias, config);
  return new UsageError(`No board stored as "${alias}".`, { suggestion, hint: suggestion === undefined ? (stored ?? ADD_A_BOARD) : undefined });
}

/** The board stored as `alias` in `config`, else the not-found error (before a verb asks for anything). */
export function requireBoard(config: CardboardConfig, alias: string): StoredBoard {
  const board = storedBoard(config, alias);
  if (!board) throw unknownAlias(alias, config);
  return board;
}

/**
 * Read the config, hand `change` the board stored as `alias` (undefined when there is none) and the config
 * to change, then write it (0600) and return what `change` returned. Nothing is written when it throws.
 */
export async function changeBoard<T>(store: ConfigStore, alias: string, change: (board: StoredBoard | undefined, config: CardboardConfig) => T): Promise<T> {
  let result: { value: T } | undefined;
  await store.update((config) => {
    result = { value: change(storedBoard(config, alias), config) };
  });
  return result!.value;
}

/** changeBoard for a board that must be stored already: an alias that is not is the not-found error, and nothing is written. */
export function changeStoredBoard<T>(store: ConfigStore, alias: string, change: (board: StoredBoard, config: CardboardConfig) => T): Promise<T> {
  return changeBoard(store, alias, (_board, config) => change(requireBoard(config, alias), config));
}
