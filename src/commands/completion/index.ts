import type { Command } from 'commander';
import type { ContextRef } from '../../context.js';
import { completionCommand, type TreeLoader } from './completion.js';

/** Register `completion [shell]`: one command, no verbs. */
export function register(program: Command, ctx: ContextRef, tree: TreeLoader): void {
  completionCommand(program, ctx, tree);
}
