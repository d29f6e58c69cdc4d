import type { Command } from 'commander';
import type { Context } from '../../context.js';
import { importCommand } from './import.js';

/** Register `import <file>`: one command, no verbs. */
export function register(program: Command, ctx: Context): void {
  importCommand(program, ctx);
}
