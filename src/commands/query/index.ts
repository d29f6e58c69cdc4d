import type { Command } from 'commander';
import type { ContextRef } from '../../context.js';
import { queryCommand } from './query.js';

/** Register `query` (no verbs): read-only SQL over the selected board's mirror. */
export function register(program: Command, ctx: ContextRef): void {
  queryCommand(program, ctx);
}
