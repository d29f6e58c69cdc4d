import { existsSync, statSync } from 'node:fs';
import type { Command } from 'commander';
import type { Context } from '../../context.js';
import { AuthError, CancelledError, CardboardError, UsageError } from '../../errors.js';
import { interruptible } from '../../interrupt.js';
import { createStatus } from '../../io/status.js';
import { terminalText } from '../../io/text.js';
import { answerStart, DeliveryClient } from '../../webhook/client.js';
import { bodyValue, type Delivery, outgoingHeaders } from '../../webhook/delivery.js';
import { readDeliveries } from '../../webhook/record-file.js';
import { loadSigningKey, NO_KEY_HINT } from './key.js';
import { answerText } from './render.js';
import { httpUrl } from './url.js';
import { parseInteger } from '../../units.js';

/** Options of `webhook replay`, as plain data. */
export interface WebhookReplayOptions {
  file: string;
  to: string;
  /** First sequence number to send. */
  from: number;
  /** Field=value pairs a delivery's JSON body must all match. */
  filters: Array<[string, string]>;
  signingKeyStdin: boolean;
  json: boolean;
  timeoutMs: number;
}

/** Register `webhook replay`. */
export function webhookReplayCommand(parent: Command, ctx: Context, run = runWebhookReplay): Command {
  return parent
    .command('replay')
    .description('Re-send recorded deliveries in order (exact bytes and headers); show answers')
    .argument('<file.jsonl>', 'a file written by `webhook listen --record`')
    .requiredOption('--to <url>', 'receiver to send to')
    .option('--from <seq>', 'start at this sequence number', '1')
    .option('--filter <Field=value>', 'only deliveries whose card has Field equal to value (repeatable)', (v: string, all: string[]) => [...all, v], [] as string[])
    .option('--signing-key-stdin', 'read the signing key from stdin (else CARDBOARD_SIGNING_KEY or the stored board)')
    .option('--json', 'one JSON result per delivery on stdout')
    .addHelpText('after', `
Every answer other than 200 counts as failed (spec 6: only a 200 is delivered); exit 1 if any failed,
4 if the receiver refused the key (401/403).
The signing key goes over plain http:// only to loopback; another host needs https:// or --insecure.

Examples:
  $ cardboard webhook replay hooks.jsonl --to http://localhost:3000/hooks
  $ cardboard webhook replay hooks.jsonl --to http://localhost:3000/hooks --from 42 --filter Status=Done`)
    .action(async (file: string, o: { to: string; from: string; filter: string[]; signingKeyStdin?: boolean; json?: boolean }) => {
      const filters = o.filter.map((f): [string, string] => {
        const at = f.indexOf('=');
        if (at < 1) throw new UsageError(`--filter: expected Field=value, got "${f}"`);
        return [f.slice(0, at), f.slice(at + 1)];
      });
      await run(ctx, {
        file,
        to: httpUrl(o.to, '--to', { insecure: ctx.globals.insecure }),
        from: parseInteger(o.from, '--from', 0),
        filters,
        signingKeyStdin: o.signingKeyStdin === true,
        json: o.json === true,
        timeoutMs: ctx.globals.timeout ?? 60_000,
      });
    });
}

/** Whether a delivery's card matches every filter (field names exact and case-sensitive, spec 2.2). */
export function matchesFilters(d: Delivery, filters: Array<[string, string]>): boolean {
  if (filters.length === 0) return true;
  const body = bodyValue(d.body);
  if (typeof body !== 'object' || body === null) return false;
  const card = body as Record<string, unknown>;
  return filters.every(([field, want]) => field in card && (typeof card[field] === 'string' ? card[field] : JSON.stringify(card[field])) === want);
}

/** Send the matching deliveries one by one in recorded order; throws at the end if any was not answered 200. */
export async function runWebhookReplay(ctx: Context, opts: WebhookReplayOptions): Promise<void> {
  if (!existsSync(opts.file)) throw new UsageError(`no such record file: ${opts.file}`);
  const signing = await loadSigningKey(ctx, opts.signingKeyStdin);
  if (!signing) throw new AuthError('no webhook signing key to sign the replayed deliveries with (spec 6)', { hint: NO_KEY_HINT });
  const status = createStatus(ctx);
  const client = new DeliveryClient(1);
  const size = statSync(opts.file).size;
  const failed: string[] = [];
  let sent = 0;
  let refused = false;
  let lastSent: number | undefined;
  const stop = interruptible(ctx.signals, () => status.warn('Interrupted: finishing the delivery in flight (Ctrl-C again to quit at once)...'));
  const stopped = () => stop.signal.aborted || ctx.signal.aborted;
  try {
    for (let offset = 0; offset < size && !stopped(); ) {
      const batch = readDeliveries(opts.file, offset, opts.from - 1, 100, 8 * 1024 * 1024);
      // No progress: only a last line cut short by a crash is left (never acknowledged, so not a delivery).
      if (batch.next === offset) break;
      offset = batch.next;
      for (const d of batch.deliveries) {
        if (stopped()) break;
        if (!matchesFilters(d, opts.filters)) continue;
        const answer = await client.send({ url: opts.to, method: d.method, headers: outgoingHeaders(d.headers, signing.key), body: d.body, timeoutMs: opts.timeoutMs, signal: ctx.signal });
        sent++;
        lastSent = d.seq;
        if (answer.status !== 200) failed.push(`#${d.seq} ${answer.status ?? answer.error}`);
        if (answer.status === 401 || answer.status === 403) refused = true;
        const start = answerStart(answer.body);
        if (opts.json) ctx.stdout.write(`${JSON.stringify({ seq: d.seq, status: answer.status ?? null, ms: Math.round(answer.ms * 10) / 10, error: answer.error, body: start })}\n`);
        else ctx.stdout.write(`${terminalText(`#${d.seq}  ${answerText(answer)}${start ? `  ${start}` : ''}`)}\n`);
      }
    }
  } finally {
    stop.dispose();
    await client.close();
  }
  if (stopped()) {
    throw new CancelledError(`Interrupted after ${sent} deliveries.`, {
      hint: `Resume with --from ${lastSent === undefined ? opts.from : lastSent + 1}.`,
    });
  }
  status.info(`replayed ${sent}: ${sent - failed.length} answered 200, ${failed.length} failed${failed.length ? ` (${failed.slice(0, 5).join(', ')}${failed.length > 5 ? ', …' : ''})` : ''}`);
  if (failed.length === 0) return;
  const message = `${failed.length} of ${sent} deliveries were not answered 200`;
  if (refused) throw new AuthError(`${message}; the receiver refused the signing key`, { hint: 'Check that the receiver and this command use the same signing key.' });
  throw new CardboardError(message, { hint: `Fix the receiver, then resend from the first failure with --from ${failed[0]!.slice(1).split(' ')[0]}.` });
}
