import type { Command } from 'commander';
import type { ContextRef } from '../../context.js';
import { schemaCommand } from './schema.js';

/** Register `schema`: the board's fields (no verbs). */
export function register(program: Command, ctx: ContextRef): void {
  schemaCommand(program, ctx);
}
