import type { Command } from 'commander';
import type { ContextRef } from '../../context.js';
import { importCommand } from './import.js';

/** Register `import <file>`: one command, no verbs. */
export function register(program: Command, ctx: ContextRef): void {
  importCommand(program, ctx);
}
