import type { Command } from 'commander';
import { type Context, type ContextRef, ownSecrets, type SecretsRef } from '../../context.js';
import type { SecretKeeper } from '../../redact.js';
import { AuthError, CancelledError, CardboardError, UsageError } from '../../errors.js';
import { httpUrl } from '../../http/url.js';
import { createStatus } from '../../io/status.js';
import { plural, terminalText } from '../../io/text.js';
import { checkKeys, describeUnknownKeys } from '../../schema/match.js';
import { type Duration, durationOf, parseInteger } from '../../units.js';
import { inexactNumber } from '../../webhook/json-bytes.js';
import { type CardEdit, checkRecordFile, Replay, type ReplayAnswer, type ReplayResult, shortNumber } from '../../webhook/replay.js';
import { parsePairs } from '../card/pairs.js';
import { KEY_TRANSPORT_HELP, loadSigningKey, noKeyHint, signingKeyStdinOption } from './key.js';
import { answerStart, answerStartData, answerText, notAnsweredText } from './render.js';

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
  /** `--set`: fields set in each replayed card before it is sent. */
  edit?: CardEdit;
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
    .option('--set <Field=value>', 'send each card with this field set: Field=value (string) or Field:=<json> (repeatable)', (v: string, all: string[]) => [...all, v], [] as string[])
    .option('--allow-unknown', '--set may add a field the card does not have')
    .addOption(signingKeyStdinOption())
    .option('--json', 'one JSON result per delivery on stdout')
    .addHelpText('after', `
Every answer other than 200 counts as failed (spec 6: only a 200 is delivered); exit 1 if any failed,
4 if the receiver refused the key (401/403). A file that is not a record file, or a --filter or --changed
field that no delivery of the file has (from #1, whatever --from), exits 2; a filter that matches none
replays 0 (exit 0). Ctrl-C finishes the delivery in flight, names the --from to resume at, and ends
by SIGINT (130; SIGTERM: 143).
--changed compares each delivery with the card's delivery before it in the file (from #1, whatever --from);
a card's first delivery changes every field it has. --filter and --changed read the recorded bodies.
--set sends each card (the body, a JSON object) re-serialised with the field set; the record file is not
changed. A field the card lacks exits 2 before anything is sent, unless --allow-unknown; a body that is
not a JSON object is not sent (exit 1).
${KEY_TRANSPORT_HELP}

Examples:
  $ cardboard webhook replay hooks.jsonl --to http://localhost:3000/hooks
  $ cardboard webhook replay hooks.jsonl --to http://localhost:3000/hooks --from 42 --filter Status=Open --set Status=Done
  $ cardboard webhook replay hooks.jsonl --to http://localhost:3000/hooks --changed Status`)
    .action(async (file: string, flags: { to: string; from: string; filter: string[]; changed: string[]; set: string[]; allowUnknown?: boolean; signingKeyStdin?: boolean; json?: boolean }) => {
      const filters = flags.filter.map((f): [string, string] => {
        const at = f.indexOf('=');
        if (at < 1) throw new UsageError(`--filter: expected Field=value, got "${f}"`);
        return [f.slice(0, at), f.slice(at + 1)];
      });
      await run(ctx(), {
        file,
        to: httpUrl(flags.to, '--to', { insecure: ctx().globals.insecure }),
        from: parseInteger(flags.from, '--from', 0),
        filters,
        changed: flags.changed,
        edit: editOf(flags.set, flags.allowUnknown === true),
        signingKeyStdin: flags.signingKeyStdin === true,
        json: flags.json === true,
        timeout: ctx().globals.timeout ?? durationOf(60_000),
      }, secrets());
    });
}

/** --set's pairs, parsed as `card put` parses its own (Field=value, Field:=json); undefined without --set. */
function editOf(pairs: string[], allowUnknown: boolean): CardEdit | undefined {
  if (allowUnknown && pairs.length === 0) throw new UsageError('--allow-unknown needs --set');
  if (pairs.length === 0) return undefined;
  // A := number JSON.parse cannot keep (1e999 is sent null, a 20-digit id rounded): refused, not sent changed.
  for (const pair of pairs) {
    const at = pair.indexOf(':=');
    const inexact = at > 0 && pair.indexOf('=') === at + 1 ? inexactNumber(pair.slice(at + 2)) : undefined;
    if (inexact !== undefined) throw new UsageError(`--set ${pair.slice(0, at)}: ${shortNumber(inexact)} cannot be sent exactly as a JSON number`, { hint: `Give it as a string (${pair.slice(0, at)}=…), or a number JSON keeps: whole numbers up to 2^53.` });
  }
  try {
    return { set: parsePairs(pairs), allowUnknown };
  } catch (err) {
    if (err instanceof UsageError) throw new UsageError(`--set: ${err.message}`, { hint: err.hint, cause: err });
    throw err;
  }
}

/**
 * A --filter whose field no delivery of the file has matches nothing: exit 2 with the nearest recorded field, the way
 * `card put` treats an unknown field. Nothing was sent (no delivery could match).
 */
function checkFilterFields(opts: WebhookReplayOptions, { fields, cards }: ReplayResult, read: number): void {
  const named = [...opts.filters.map(([field]) => field), ...opts.changed];
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
  const replay = new Replay(
    { ...opts, key: signing.key, secrets: [signing.key, ...ctx.secrets] },
    { drain: ctx.drain.signal, signal: ctx.signal, onAnswer: (a) => ctx.stdout.write(answerLine(a, opts.json)) },
  );
  const same = [opts.filters.length ? '--filter' : '', opts.changed.length ? '--changed' : '', opts.edit ? '--set' : ''].filter(Boolean).join(', ');
  const resumeText = () => `--from ${replay.inFlight ?? replay.resumeAt}${same ? ` and the same ${same}` : ''}`;
  const undrain = ctx.drain.enable({
    graceMs: IN_FLIGHT_GRACE_MS,
    onFirst: () =>
      status.warn(
        replay.inFlight === undefined
          ? `Interrupted: stopping. Resume with ${resumeText()}.`
          : `Interrupted: finishing #${replay.inFlight} in flight (Ctrl-C again to quit at once, then resume with ${resumeText()}).`,
      ),
  });
  let result: ReplayResult;
  try {
    result = await replay.run();
  } finally {
    undrain();
  }
  const { unreadable, failed, sent } = result;
  if (unreadable.length > 0) {
    const lines = `${unreadable.slice(0, 5).join(', ')}${unreadable.length > 5 ? ', …' : ''}`;
    status.warn(`skipped ${plural(unreadable.length, 'line')} of ${opts.file} that ${unreadable.length === 1 ? 'is' : 'are'} not a delivery (line ${lines}): a line cut short by a crash was never answered 200`);
  }
  if (ctx.drain.signal.aborted) {
    const earlier = failed.length ? `; ${failed.length} answered before were not 200 (first ${failed[0]})` : '';
    throw new CancelledError(`Interrupted after ${plural(sent, 'delivery', 'deliveries')}${earlier}.`, { hint: `Resume with ${resumeText()}.` });
  }
  checkFilterFields(opts, result, opts.changed.length ? result.read : result.inRange);
  const notSent = notCardsText(result.notCards);
  status.info(`replayed ${sent}: ${sent - failed.length} answered 200, ${failed.length} failed${failed.length ? ` (${failed.slice(0, 5).join(', ')}${failed.length > 5 ? ', …' : ''})` : ''}${notSent ? `; ${notSent}` : ''}`);
  if (failed.length === 0 && !notSent) return;
  if (failed.length === 0) throw new CardboardError(notSent!, { hint: 'Replay those without --set, or leave them out with --filter or --from.' });
  const message = `${notAnsweredText(failed.length, sent)}${notSent ? `; ${notSent}` : ''}`;
  if (result.refused) throw new AuthError(`${message}; the receiver refused the signing key`, { hint: 'Check that the receiver and this command use the same signing key.' });
  throw new CardboardError(message, { hint: `Fix the receiver, then resend from the first failure with --from ${failed[0]!.slice(1).split(' ')[0]}.` });
}

/** The deliveries --set could not edit (not sent), in words; undefined when there are none. */
function notCardsText(seqs: number[]): string | undefined {
  if (seqs.length === 0) return undefined;
  const list = `${seqs.slice(0, 5).map((n) => `#${n}`).join(', ')}${seqs.length > 5 ? ', …' : ''}`;
  return `${plural(seqs.length, 'delivery', 'deliveries')} not sent (${list}): not a card (a JSON object) for --set to change`;
}

/** One answer as a line: `--json`, or for a person. */
function answerLine({ seq, answer, notSent }: ReplayAnswer, json: boolean): string {
  if (notSent && !json) return `#${seq}  ${notSent}\n`;
  if (json) return `${JSON.stringify({ seq, status: answer.status ?? null, ms: Math.round(answer.ms * 10) / 10, error: answer.error, body: answerStartData(answer.body) })}\n`;
  const start = answerStart(answer.body);
  return `${terminalText(`#${seq}  ${answerText(answer)}${start ? `  ${start}` : ''}`)}\n`;
}
