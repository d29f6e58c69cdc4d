import type { Command } from 'commander';
import type { ContextRef } from '../../context.js';
import { nounSummary } from '../nouns.js';
import { cardGetCommand } from './get.js';
import { cardListCommand } from './list.js';
import { cardPutCommand } from './put.js';

const EXAMPLES = `
Examples:
  $ id=$(cardboard card put Name="Fix login" Status=Open)
  $ cardboard card get "$id"
  $ cardboard card list --all --format csv > cards.csv`;

/** Register `card` with its verbs get, put and list. */
export function register(program: Command, ctx: ContextRef): void {
  const card = program.command('card').description(nounSummary('card')).addHelpText('after', EXAMPLES);
  cardGetCommand(card, ctx);
  cardPutCommand(card, ctx);
  cardListCommand(card, ctx);
}
