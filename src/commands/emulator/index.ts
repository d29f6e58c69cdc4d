import type { Command } from 'commander';
import type { ContextRef } from '../../context.js';
import { emulatorCommand } from './emulator.js';

/** `cardboard emulator`: one command, no verbs; run.ts holds its options and run function. */
export function register(program: Command, ctx: ContextRef): void {
  emulatorCommand(program, ctx);
}
