import type { Command } from 'commander';
import type { ContextRef } from '../../context.js';
import { commentCommand } from './comment.js';

/** Register `comment` (no verbs): post a comment on a card. */
export function register(program: Command, ctx: ContextRef): void {
  commentCommand(program, ctx);
}
