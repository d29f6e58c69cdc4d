import { statSync } from 'node:fs';
import type { Command } from 'commander';
import { type Context, type ContextRef, ownSecrets, type SecretsRef } from '../../context.js';
import type { SecretKeeper } from '../../redact.js';
import { AuthError, CancelledError, CardboardError, UsageError } from '../../errors.js';
import { createStatus } from '../../io/status.js';
import { plural, terminalText } from '../../io/text.js';
import { ownValue } from '../../own-keys.js';
import { DeliveryClient } from '../../webhook/client.js';
import { bodyValue, type Delivery, outgoingHeaders } from '../../webhook/delivery.js';
import { CardStates, cardIn } from '../../webhook/changes.js';
import { readDeliveries, sniffRecordFile } from '../../webhook/record-file.js';
import { checkKeys, describeUnknownKeys } from '../../schema/match.js';
import { KEY_TRANSPORT_HELP, loadSigningKey, noKeyHint, signingKeyStdinOption } from './key.js';
import { answerStart, answerStartData, answerText, notAnsweredText } from './render.js';
import { httpUrl } from '../../http/url.js';
import { type Duration, durationOf, parseInteger } from '../../units.js';

/** Options of `webhook replay`, as plain data. */
export interface WebhookReplayOptions {
  file: string;
  to: string;
  /** First sequence number to send. */
  from: number;
  /** Field=value pairs a delivery's JSON body must all match. */
  filters: Array<[string, string]>;
  /** Fields of which a delivery must have changed at least one (against the card's delivery before it). */
  changed: string[];
  signingKeyStdin: boolean;
  json: boolean;
  timeout: Duration;
}

/** After Ctrl-C, how long the delivery in flight may take to be answered before it is cut off (and sent again on resume). */
const IN_FLIGHT_GRACE_MS = 2000;

/** Register `webhook replay`. */
export function webhookReplayCommand(parent: Command, ctx: ContextRef, run = runWebhookReplay, secrets: SecretsRef = ownSecrets): Command {
  return parent
    .command('replay')
    .description('Re-send recorded deliveries in order (exact bytes and headers); show answers')
    .argument('<file.jsonl>', 'a file written by `webhook listen --record`')
    .requiredOption('--to <url>', 'receiver to send to')
    .option('--from <seq>', 'start at this sequence number', '1')
    .option('--filter <Field=value>', 'only deliveries whose card has Field equal to value (repeatable)', (v: string, all: string[]) => [...all, v], [] as string[])
    .option('--changed <Field>', "only deliveries that changed this field of their card (repeatable: any of them)", (v: string, all: string[]) => [...all, v], [] as string[])
    .addOption(signingKeyStdinOption())
    .option('--json', 'one JSON result per delivery on stdout')
    .addHelpText('after', `
Every answer other than 200 counts as failed (spec 6: only a 200 is delivered); exit 1 if any failed,
4 if the receiver refused the key (401/403). A file that is not a record file, or a --filter or --changed
field that no delivery of the file has (from #1, whatever --from), exits 2; a filter that matches none
replays 0 (exit 0). Ctrl-C finishes the delivery in flight, names the --from to resume at, and ends
by SIGINT (130; SIGTERM: 143).
--changed compares each delivery with the card's delivery before it in the file (from #1, whatever --from);
a card's first delivery changes every field it has.
${KEY_TRANSPORT_HELP}

Examples:
  $ cardboard webhook replay hooks.jsonl --to http://localhost:3000/hooks
  $ cardboard webhook replay hooks.jsonl --to http://localhost:3000/hooks --from 42 --filter Status=Done
  $ cardboard webhook replay hooks.jsonl --to http://localhost:3000/hooks --changed Status`)
    .action(async (file: string, o: { to: string; from: string; filter: string[]; changed: string[]; signingKeyStdin?: boolean; json?: boolean }) => {
      const filters = o.filter.map((f): [string, string] => {
        const at = f.indexOf('=');
        if (at < 1) throw new UsageError(`--filter: expected Field=value, got "${f}"`);
        return [f.slice(0, at), f.slice(at + 1)];
      });
      await run(ctx(), {
        file,
        to: httpUrl(o.to, '--to', { insecure: ctx().globals.insecure }),
        from: parseInteger(o.from, '--from', 0),
        filters,
        changed: o.changed,
        signingKeyStdin: o.signingKeyStdin === true,
        json: o.json === true,
        timeout: ctx().globals.timeout ?? durationOf(60_000),
      }, secrets());
    });
}

/** Whether a delivery's card matches every filter (field names exact and case-sensitive, spec 2.2). */
export function matchesFilters(d: Delivery, filters: Array<[string, string]>): boolean {
  return filters.length === 0 || cardMatches(cardOf(d), filters);
}

function cardMatches(card: Record<string, unknown> | undefined, filters: Array<[string, string]>): boolean {
  // Own fields only: `--filter constructor=x` must not find Object.prototype's.
  return (
    card !== undefined &&
    filters.every(([field, want]) => {
      const v = ownValue(card, field);
      return v !== undefined && (typeof v === 'string' ? v : JSON.stringify(v)) === want;
    })
  );
}

/**
 * The card a delivery's body holds: the body when it is a JSON object; with `unwrap` (--changed), the card
 * as CardStates reads it, which may be wrapped in an event (`{"event":…,"data":{"_id":…}}`).
 */
function cardOf(d: Delivery, unwrap = false): Record<string, unknown> | undefined {
  const body = bodyValue(d.body);
  if (unwrap) return cardIn(body);
  return typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : undefined;
}

/** Field names gathered from the deliveries read, to check --filter against; bounded for a hostile file. */
const MAX_FIELD_NAMES = 10_000;

/** The file named must be a record file: `replay big.csv` must fail, not replay nothing and exit 0. */
function checkRecordFile(file: string): 'empty' | 'record' {
  let kind: ReturnType<typeof sniffRecordFile>;
  try {
    if (!statSync(file).isFile()) throw new UsageError(`${file} is not a file: give a record file written by \`cardboard webhook listen --record\``);
    kind = sniffRecordFile(file);
  } catch (err) {
    if (err instanceof UsageError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    throw new UsageError(code === 'ENOENT' ? `no such record file: ${file}` : `cannot read ${file} (${code ?? (err as Error).message})`, { cause: err });
  }
  if (kind === 'other') {
    throw new UsageError(`${file} is not a record file: its first line is not a delivery recorded by \`cardboard webhook listen --record\``, {
      hint: 'A record file holds one delivery a line ({"seq":1,"receivedAt":…,"bodyBase64":…}); make one with `cardboard webhook listen --record hooks.jsonl`.',
    });
  }
  return kind;
}

/**
 * A --filter whose field no delivery of the file has matches nothing: exit 2 with the nearest recorded field, the way
 * `card put` treats an unknown field. Nothing was sent (no delivery could match).
 */
function checkFilterFields(opts: WebhookReplayOptions, fields: Set<string>, read: number, cards: number): void {
  const named = [...opts.filters.map(([f]) => f), ...opts.changed];
  if (named.length === 0 || read === 0) return;
  const flag = opts.filters.length ? '--filter' : '--changed';
  // Both read the file from #1, whatever --from: --changed because a change is against the delivery before
  // it, --filter because a field the earlier deliveries have is a field of this file (a filter that
  // matches none of the later ones replays nothing and exits 0).
  const where = `the deliveries of ${opts.file}`;
  if (cards === 0) {
    throw new UsageError(`${flag} ${named[0]}: none of ${where} is a card (a JSON object body), so no field can match`, { hint: `Drop ${flag} to replay them all.` });
  }
  const unknown = checkKeys(new Set(named), [...fields]);
  if (unknown.length === 0) return;
  const shown = [...fields].slice(0, 10).map((f) => terminalText(f));
  throw new UsageError(`${flag}: ${describeUnknownKeys(unknown)} in ${where}`, {
    hint: `Field names are compared exactly, case included (spec 2.2). Recorded fields: ${shown.join(', ')}${fields.size > shown.length ? ', …' : ''}.`,
  });
}

/** Send the matching deliveries one by one in recorded order; throws at the end if any was not answered 200. */
export async function runWebhookReplay(ctx: Context, opts: WebhookReplayOptions, keeper: SecretKeeper): Promise<void> {
  const kind = checkRecordFile(opts.file);
  const signing = await loadSigningKey(ctx, opts.signingKeyStdin, 'replay', keeper);
  if (!signing) throw new AuthError('no webhook signing key to sign the replayed deliveries with (spec 6)', { hint: await noKeyHint(ctx) });
  const status = createStatus(ctx);
  if (kind === 'empty') {
    status.info(`replayed 0: ${opts.file} holds no deliveries yet`);
    return;
  }
  const client = new DeliveryClient(1);
  const states = opts.changed.length ? new CardStates({ secrets: [signing.key, ...ctx.secrets] }) : undefined;
  const wanted = new Set(opts.changed);
  const size = statSync(opts.file).size;
  const failed: string[] = [];
  const fields = new Set<string>();
  const unreadable: number[] = [];
  let read = 0;
  /** Deliveries from --from on: none (an empty range) replays nothing and is no error, whatever --filter says. */
  let inRange = 0;
  let cards = 0;
  let lineBase = 0;
  let sent = 0;
  let refused = false;
  /** Where a resumed run starts: just past the last delivery answered, which Ctrl-C names. */
  let resumeAt = opts.from;
  let inFlight: number | undefined;
  const resumeText = () => `--from ${inFlight ?? resumeAt}${opts.filters.length || opts.changed.length ? ` and the same ${opts.filters.length ? '--filter' : '--changed'}` : ''}`;
  const undrain = ctx.drain.enable({
    graceMs: IN_FLIGHT_GRACE_MS,
    onFirst: () =>
      status.warn(
      inFlight === undefined
        ? `Interrupted: stopping. Resume with ${resumeText()}.`
          : `Interrupted: finishing #${inFlight} in flight (Ctrl-C again to quit at once, then resume with ${resumeText()}).`,
      ),
  });
  const stopped = () => ctx.drain.signal.aborted;
  try {
    for (let offset = 0; offset < size && !stopped(); ) {
      // With --changed every delivery is read, to know each card's state before the first one sent; with
      // --filter too, so that its field is checked against the whole file, not only the part from --from.
      const whole = states !== undefined || opts.filters.length > 0;
      const batch = readDeliveries(opts.file, offset, whole ? 0 : opts.from - 1, 100, 8 * 1024 * 1024);
      for (const i of batch.unreadable) unreadable.push(lineBase + i + 1);
      lineBase += batch.lines;
      // No progress: only a last line cut short by a crash is left (never acknowledged, so not a delivery).
      if (batch.next === offset) break;
      offset = batch.next;
      for (const d of batch.deliveries) {
        if (stopped()) break;
        read++;
        const change = states?.apply(d.body);
        const card = opts.filters.length || states ? cardOf(d, states !== undefined) : undefined;
        if (card) {
          cards++;
          for (const f of Object.keys(card)) if (fields.size < MAX_FIELD_NAMES) fields.add(f);
        }
        if (d.seq < opts.from) continue;
        inRange++;
        if (opts.filters.length && !cardMatches(card, opts.filters)) continue;
        if (change && !change.changes.some((c) => wanted.has(c.field))) continue;
        inFlight = d.seq;
        const answer = await client.send({ url: opts.to, method: d.method, headers: outgoingHeaders(d.headers, signing.key), body: d.body, timeout: opts.timeout, signal: ctx.signal });
        // Cut off by SIGTERM: not answered, so a resumed run sends it again.
        if (answer.status === undefined && ctx.signal.aborted) break;
        inFlight = undefined;
        sent++;
        resumeAt = d.seq + 1;
        if (answer.status !== 200) failed.push(`#${d.seq} ${answer.status ?? answer.error}`);
        if (answer.status === 401 || answer.status === 403) refused = true;
        if (opts.json) ctx.stdout.write(`${JSON.stringify({ seq: d.seq, status: answer.status ?? null, ms: Math.round(answer.ms * 10) / 10, error: answer.error, body: answerStartData(answer.body) })}\n`);
        else {
          const start = answerStart(answer.body);
          ctx.stdout.write(`${terminalText(`#${d.seq}  ${answerText(answer)}${start ? `  ${start}` : ''}`)}\n`);
        }
      }
    }
  } finally {
    undrain();
    await client.close();
  }
  if (unreadable.length > 0) {
    const lines = `${unreadable.slice(0, 5).join(', ')}${unreadable.length > 5 ? ', …' : ''}`;
    status.warn(`skipped ${plural(unreadable.length, 'line')} of ${opts.file} that ${unreadable.length === 1 ? 'is' : 'are'} not a delivery (line ${lines}): a line cut short by a crash was never answered 200`);
  }
  if (stopped()) {
    const earlier = failed.length ? `; ${failed.length} answered before were not 200 (first ${failed[0]})` : '';
    throw new CancelledError(`Interrupted after ${plural(sent, 'delivery', 'deliveries')}${earlier}.`, { hint: `Resume with ${resumeText()}.` });
  }
  checkFilterFields(opts, fields, opts.changed.length ? read : inRange, cards);
  status.info(`replayed ${sent}: ${sent - failed.length} answered 200, ${failed.length} failed${failed.length ? ` (${failed.slice(0, 5).join(', ')}${failed.length > 5 ? ', …' : ''})` : ''}`);
  if (failed.length === 0) return;
  const message = notAnsweredText(failed.length, sent);
  if (refused) throw new AuthError(`${message}; the receiver refused the signing key`, { hint: 'Check that the receiver and this command use the same signing key.' });
  throw new CardboardError(message, { hint: `Fix the receiver, then resend from the first failure with --from ${failed[0]!.slice(1).split(' ')[0]}.` });
}
