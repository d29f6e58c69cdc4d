import type { Command } from 'commander';
import type { Context } from '../../context.js';
import { webhookListenCommand } from './listen.js';
import { webhookReplayCommand } from './replay.js';
import { webhookSendCommand } from './send.js';

/** Register `webhook` and its verbs: listen, replay, send. */
export function register(program: Command, ctx: Context): void {
  const webhook = program.command('webhook').description('Listen for, record, forward, replay and send webhook deliveries');
  webhookListenCommand(webhook, ctx);
  webhookReplayCommand(webhook, ctx);
  webhookSendCommand(webhook, ctx);
}
