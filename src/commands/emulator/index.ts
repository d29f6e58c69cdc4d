import type { Command } from 'commander';
import type { ContextRef, SecretsRef } from '../../context.js';
import { emulatorCommand, runEmulator } from './emulator.js';

/** `cardboard emulator`: one command, no verbs; run.ts holds its options and run function. */
export function register(program: Command, ctx: ContextRef, _tree: unknown, secrets: SecretsRef): void {
  emulatorCommand(program, ctx, runEmulator, secrets);
}
