import type { Command } from 'commander';
import type { ContextRef, SecretsRef } from '../../context.js';
import { nounSummary } from '../nouns.js';
import { runWebhookListen, webhookListenCommand } from './listen.js';
import { runWebhookReplay, webhookReplayCommand } from './replay.js';
import { runWebhookSend, webhookSendCommand } from './send.js';

const EXAMPLES = `
Examples:
  $ cardboard webhook listen --record hooks.jsonl
  $ cardboard webhook send --to http://localhost:8787/
  $ cardboard webhook replay hooks.jsonl --to http://localhost:3000/hooks`;

/** Register `webhook` and its verbs: listen, replay, send. */
export function register(program: Command, ctx: ContextRef, _tree: unknown, secrets: SecretsRef): void {
  const webhook = program
    .command('webhook')
    .description(nounSummary('webhook'))
    .addHelpText('after', EXAMPLES);
  webhookListenCommand(webhook, ctx, runWebhookListen, secrets);
  webhookReplayCommand(webhook, ctx, runWebhookReplay, secrets);
  webhookSendCommand(webhook, ctx, runWebhookSend, secrets);
}
