import type { Command } from 'commander';
import type { ContextRef } from '../../context.js';
import { apiCommand } from './api.js';

/** Register `api` (no verbs): one raw request to the service. */
export function register(program: Command, ctx: ContextRef): void {
  apiCommand(program, ctx);
}
