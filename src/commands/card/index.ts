import type { Command } from 'commander';
import type { Context } from '../../context.js';
import { cardGetCommand } from './get.js';
import { cardListCommand } from './list.js';
import { cardPutCommand } from './put.js';

/** Register `card` with its verbs get, put and list. */
export function register(program: Command, ctx: Context): void {
  const card = program.command('card').description('Get, create/update (put) and list cards');
  cardGetCommand(card, ctx);
  cardPutCommand(card, ctx);
  cardListCommand(card, ctx);
}
