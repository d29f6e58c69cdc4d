import { randomBytes, randomInt } from 'node:crypto';
import type { Command } from 'commander';
import { type Context, type ContextRef, ownSecrets, type SecretsRef } from '../../context.js';
import type { SecretKeeper } from '../../redact.js';
import { AuthError, CancelledError, CardboardError, UsageError } from '../../errors.js';
import { readTextArgument } from '../../io/input.js';
import { textFor } from '../../io/text.js';
import { writeChunk } from '../../io/write.js';
import { DeliveryClient } from '../../webhook/client.js';
import { SIGNING_HEADER } from '../../webhook/delivery.js';
import { KEY_TRANSPORT_HELP, loadSigningKey, noKeyHint, signingKeyStdinOption } from './key.js';
import { answerText } from './render.js';
import { httpUrl } from '../../http/url.js';
import { type Duration, durationOf } from '../../units.js';

/** Options of `webhook send`, as plain data. */
export interface WebhookSendOptions {
  to: string;
  /** JSON text, `@file` or `-` (stdin). */
  data?: string;
  card?: string;
  signingKeyStdin: boolean;
  wrongKey: boolean;
  timeout: Duration;
  /** Print the answer as one JSON object instead of the status line and body. */
  json: boolean;
}

/** Register `webhook send`. */
export function webhookSendCommand(parent: Command, ctx: ContextRef, run = runWebhookSend, secrets: SecretsRef = ownSecrets): Command {
  return parent
    .command('send')
    .description("Send one signed delivery shaped like the service's; print the receiver's answer")
    .requiredOption('--to <url>', 'receiver to send to')
    .option('--data <json|@file|->', 'the card to send (JSON object; `_id` added when missing)')
    .option('--card <id>', "send a real card, fetched from the board (spec 4.4)")
    .addOption(signingKeyStdinOption())
    .option('--wrong-key', "sign with a wrong key (the real one plus a character) to test the receiver's 403")
    .option('--json', 'print the answer as one JSON object: status (null when none came), ms, error, body')
    .addHelpText('after', `
--json prints {"status":200,"ms":12.5,"body":"ok"} (the body as text, whole up to 64 KB, not escaped).
Exit 0 when the receiver answers 200 (spec 6: only a 200 is delivered), 4 on 401/403, 1 otherwise;
Ctrl-C while it waits for the answer ends the run by SIGINT (130; SIGTERM: 143).
With --wrong-key the expected answer is 403: exit 0 on 403, 1 if the receiver accepted the wrong key.
${KEY_TRANSPORT_HELP}

Examples:
  $ cardboard webhook send --to http://localhost:8787/ --data '{"Name":"Fix login","Status":"Open"}'
  $ cardboard webhook send --to http://localhost:3000/hooks --card "$id" --wrong-key`)
    .action(async (flags: { to: string; data?: string; card?: string; signingKeyStdin?: boolean; wrongKey?: boolean; json?: boolean }) => {
      if (flags.data !== undefined && flags.card !== undefined) throw new UsageError('--data and --card cannot be used together');
      if (flags.data === '-' && flags.signingKeyStdin) throw new UsageError('--data - and --signing-key-stdin both want stdin; put the data in a file (--data @file)');
      await run(ctx(), {
        to: httpUrl(flags.to, '--to', { insecure: ctx().globals.insecure }),
        data: flags.data,
        card: flags.card,
        signingKeyStdin: flags.signingKeyStdin === true,
        wrongKey: flags.wrongKey === true,
        json: flags.json === true,
        timeout: ctx().globals.timeout ?? durationOf(60_000),
      }, secrets());
    });
}

/** 17 letters and digits, the shape of the service's ids (`JShpBxEFgRmZnivTf`), so a receiver sees a realistic `_id`. */
function serviceShapedId(): string {
  const alphabet = '23456789ABCDEFGHJKLMNPQRSTWXYZabcdefghijkmnopqrstuvwxyz';
  return Array.from({ length: 17 }, () => alphabet[randomInt(alphabet.length)]).join('');
}

/** The card to send: --data parsed as an object, --card fetched, or a sample card. */
async function cardFor(ctx: Context, opts: WebhookSendOptions): Promise<Record<string, unknown>> {
  if (opts.card !== undefined) {
    const api = await ctx.api();
    return await api.getCard(opts.card);
  }
  const card: Record<string, unknown> = { _id: serviceShapedId() };
  if (opts.data === undefined) return { ...card, Name: 'Test delivery from cardboard webhook send' };
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readTextArgument(ctx, opts.data, '--data'));
  } catch (err) {
    if (err instanceof CardboardError) throw err;
    throw new UsageError(`--data: not valid JSON (${(err as Error).message})`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new UsageError('--data: a card is a JSON object of field names to values (spec 2.2)');
  return { ...card, ...(parsed as Record<string, unknown>) };
}

/** Send one delivery and print the answer; the exit code says whether it was the expected one. */
export async function runWebhookSend(ctx: Context, opts: WebhookSendOptions, keeper: SecretKeeper): Promise<void> {
  const signing = await loadSigningKey(ctx, opts.signingKeyStdin, 'send', keeper);
  if (!signing && !opts.wrongKey) throw new AuthError('no webhook signing key to sign the delivery with (spec 6)', { hint: `${await noKeyHint(ctx)} Or pass --wrong-key.` });
  // A suffix catches the commonest broken check: comparing only as many characters as the stored key has.
  const key = opts.wrongKey ? `${signing?.key ?? `wrong-${randomBytes(8).toString('hex')}`}x` : signing!.key;
  const body = Buffer.from(JSON.stringify(await cardFor(ctx, opts)), 'utf8');
  const client = new DeliveryClient(1);
  const answer = await client
    .send({ url: opts.to, method: 'POST', headers: { 'content-type': 'application/json', [SIGNING_HEADER]: key }, body, timeout: opts.timeout, signal: ctx.signal })
    .finally(() => client.close());
  // Cut off by Ctrl-C or SIGTERM: an interruption (the run ends by the signal, main.ts), not "no answer".
  if (answer.status === undefined && ctx.signal.aborted) throw new CancelledError(`Interrupted before ${opts.to} answered.`);
  if (opts.json) {
    // Data, as replay --json writes it: the answer's own characters, never escaped.
    const ms = Math.round(answer.ms * 10) / 10;
    await writeChunk(ctx.stdout, `${JSON.stringify({ status: answer.status ?? null, ms, error: answer.error, body: answer.body.toString('utf8') })}\n`);
  } else {
    ctx.stdout.write(`${answerText(answer)}\n`);
    // The app's answer as it is when piped; on a terminal, escaped (line breaks kept).
    const text = textFor(ctx.stdout, answer.body.toString('utf8'), { keepNewlines: true });
    if (text) ctx.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
  }
  if (answer.status === undefined) throw new CardboardError(`no answer from ${opts.to}: ${answer.error}`);
  if (opts.wrongKey) {
    if (answer.status === 403) return;
    throw new CardboardError(`the receiver answered ${answer.status} to a wrong signing key; spec 6 wants 403`);
  }
  if (answer.status === 200) return;
  if (answer.status === 401 || answer.status === 403) throw new AuthError(`the receiver refused the signing key (${answer.status})`, { hint: 'Check that the receiver and this command use the same signing key.' });
  throw new CardboardError(`the receiver answered ${answer.status}; the service retries anything but 200 (spec 6)`);
}
