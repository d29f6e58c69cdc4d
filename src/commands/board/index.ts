import type { Command } from 'commander';
import type { ContextRef, SecretsRef } from '../../context.js';
import { nounSummary } from '../nouns.js';
import { boardAddCommand, runBoardAdd } from './add.js';
import { boardListCommand } from './list.js';
import { boardRemoveCommand } from './remove.js';
import { boardSetSigningKeyCommand, runBoardSetSigningKey } from './set-signing-key.js';
import { boardShowCommand } from './show.js';
import { boardUseCommand } from './use.js';

const EXAMPLES = `
Examples:
  $ printf '%s\\n' "$TOKEN" | cardboard board add work --url "$POST_URL" --token-stdin
  $ cardboard board use work
  $ cardboard board show`;

/** Register `board` and its verbs: add, list, use, remove, show, set-signing-key. */
export function register(program: Command, ctx: ContextRef, _tree: unknown, secrets: SecretsRef): void {
  const board = program
    .command('board')
    .description(nounSummary('board'))
    .addHelpText('after', EXAMPLES);
  boardAddCommand(board, ctx, runBoardAdd, secrets);
  boardListCommand(board, ctx);
  boardUseCommand(board, ctx);
  boardRemoveCommand(board, ctx);
  boardShowCommand(board, ctx);
  boardSetSigningKeyCommand(board, ctx, runBoardSetSigningKey, secrets);
}
