import { STATUS_CODES } from 'node:http';
import { groupDigits, oneLine, plural, quoted, terminalText } from '../../io/text.js';
import { shorten } from '../../io/width.js';
import type { Delivery } from '../../webhook/delivery.js';
import type { ForwardEvent } from '../../webhook/forwarder.js';
import { type ListenerEvent, type ListenerStats, refusedTotal } from '../../webhook/listener.js';
import { CardStates, type DeliveryChange } from '../../webhook/changes.js';
import { formatBytes } from '../../units.js';

function ms(value: number): string {
  return value < 10 ? `${value.toFixed(1)} ms` : `${Math.round(value)} ms`;
}

/** A value on a line: a string as it is, anything else as JSON; escaped and cut to `max` columns. */
function short(value: unknown, max = 24): string {
  return terminalText(typeof value === 'string' ? value : JSON.stringify(value), { maxColumns: max });
}

const ANSWER_START_COLUMNS = 60;

/** The start of an answer's body as one short line for a person: escaped and cut (oneLine). */
export function answerStart(body: Buffer): string {
  return oneLine(body.toString('utf8'), ANSWER_START_COLUMNS);
}

/**
 * The same start as data (`replay --json`): white space runs as one space and cut between clusters as for a
 * person, but nothing escaped, so the JSON carries the answer's own characters.
 */
export function answerStartData(body: Buffer): string {
  return shorten(body.toString('utf8').replace(/\s+/g, ' ').trim(), ANSWER_START_COLUMNS);
}

// Every line here shows what a sender wrote (ids, field names, values, paths, the app's answer): each is
// returned through terminalText, so it is one line with no control character, whoever posted it.

/** Bodies larger than this are not parsed to show their first fields on a terminal line. */
export const LINE_PARSE_MAX_BYTES = 1024 * 1024;

/** A field value on a change line: `—` where there was none, `""` for an empty string. */
function changeValue(value: unknown): string {
  if (value === undefined) return '—';
  if (value === '') return '""';
  return short(value);
}

/** Changes shown on one line at most; the rest are counted (`+2 more`), all of them are in `--json`. */
const LINE_CHANGES = 6;
/** Fields of a new card shown on its line. */
const LINE_NEW_FIELDS = 4;

/** The part of a delivery line that says what happened: to a card, a comment, or what the body is. */
function changeText(delivery: Delivery, change: DeliveryChange): string {
  return change.event === 'other' ? otherText(delivery, change) : cardChangeText(change);
}

/**
 * What happened to a card, as a delivery line says it (`card X  Status: Open → Done`, `new card` with its first
 * fields, `deleted`, a comment): also the line of a change `mirror pull --every` found. Escaped for a terminal.
 */
export function cardChangeText(change: DeliveryChange): string {
  const id = change.cardId === undefined ? undefined : short(change.cardId, 26);
  const more = (n: number) => (n > 0 ? [`+${n} more`] : []);
  switch (change.event) {
    case 'new': {
      const shown = change.changes.slice(0, LINE_NEW_FIELDS).map((c) => `${short(c.field)}=${short(c.after)}`);
      return [`card ${id}`, 'new card', ...shown, ...more(change.changes.length - shown.length)].join('  ');
    }
    case 'changed': {
      const shown = change.changes.slice(0, LINE_CHANGES).map((c) => `${short(c.field)}: ${changeValue(c.before)} → ${changeValue(c.after)}`);
      return [`card ${id}`, ...shown, ...more(change.changes.length - shown.length)].join('  ');
    }
    case 'unchanged':
      return `card ${id}  no change`;
    case 'deleted':
      return `card ${id ?? '(no _id)'} deleted${change.name === undefined ? '' : ` (${short(change.name, 30)})`}`;
    case 'comment': {
      const by = change.comment?.author === undefined ? '' : ` by ${short(change.comment.author)}`;
      const text = change.comment?.content === undefined ? '' : `: ${quoted(short(change.comment.content, 40))}`;
      return `comment on card ${id ?? '(no _id)'}${by}${text}`;
    }
    case 'other':
      return change.name === undefined ? 'other' : short(change.name, 30);
  }
}

/** A body that is not about a card, shown as it came: an event's name, JSON that is not a card, or text. */
function otherText(delivery: Delivery, change: DeliveryChange): string {
  if (change.name !== undefined) return `${short(change.name, 30)}${change.cardId === undefined ? '' : ` on card ${short(change.cardId, 26)}`}`;
  const text = delivery.body.toString('utf8');
  let body: unknown;
  try {
    body = JSON.parse(text) as unknown;
  } catch {
    return `text ${quoted(short(text, 40))}`;
  }
  if (typeof body === 'object' && body !== null && !Array.isArray(body)) {
    const rest = Object.entries(body as Record<string, unknown>).slice(0, 3).map(([k, v]) => `${k}=${short(v)}`);
    return ['object', ...rest].join('  ');
  }
  // An array, a number, a string, true or null: shown as the JSON it is, not as text.
  return `json ${short(JSON.stringify(body), 40)}`;
}

/**
 * One readable line for a delivery: time, seq, what it did to its card (`card X  Status: Open → Done`,
 * `new card` with its first fields, `deleted`, a comment) or what its body is, and its size. Without a
 * `change` (a delivery on its own) its card counts as new.
 */
export function deliveryLine(delivery: Delivery, change?: DeliveryChange): string {
  const time = delivery.receivedAt.slice(11, 23);
  // A body past this is not decoded and parsed for a line, which would hold two or three more copies of it
  // at once (a large body costs at most about twice its size).
  if (delivery.body.length > LINE_PARSE_MAX_BYTES) {
    return terminalText(`${time}  #${delivery.seq}  ${delivery.method} ${delivery.path}  body not parsed for this line (over ${formatBytes(LINE_PARSE_MAX_BYTES)}; --json shows it)  ${formatBytes(delivery.body.length)}`);
  }
  const what = changeText(delivery, change ?? new CardStates({ maxCards: 1, maxBodyBytes: LINE_PARSE_MAX_BYTES }).apply(delivery.body));
  return terminalText(`${time}  #${delivery.seq}  ${delivery.method} ${delivery.path}  ${what}  ${formatBytes(delivery.body.length)}`);
}

/**
 * What `--json` adds beside a delivery, as the text to put before its closing brace: `"change"` (the
 * event), `"cardId"` when known, `"changes"` (`{field, before, after}`, `before` absent for a field not seen
 * before), and `"name"` / `"comment"` when the body gave them.
 */
export function changeJsonTail(change: DeliveryChange): string {
  return `,${JSON.stringify(changeJson(change)).slice(1, -1)}`;
}

/** The keys changeJsonTail adds, as an object (`mirror pull --every --json` prints them after its own). */
export function changeJson(change: DeliveryChange): Record<string, unknown> {
  const { event, cardId, name, changes, comment } = change;
  return { change: event, ...(cardId === undefined ? {} : { cardId }), ...(name === undefined ? {} : { name }), changes, ...(comment === undefined ? {} : { comment }) };
}

/** An answer as `200 OK in 3.1 ms`, or the network failure. */
export function answerText(answer: { status?: number; ms: number; error?: string }): string {
  if (answer.status === undefined) return terminalText(`no answer (${answer.error ?? 'failed'}) after ${ms(answer.ms)}`);
  return `${answer.status} ${STATUS_CODES[answer.status] ?? ''} in ${ms(answer.ms)}`.replace('  ', ' ');
}

/** One line per forward try: status, time, the start of the app's answer, and the retry plan on failure; `to`: the URL, named when there are several. */
export function forwardLine(event: ForwardEvent, to?: string): string {
  const start = answerStart(event.answer.body);
  const head = `  ↳ #${event.seq} forward${to === undefined ? '' : ` to ${to}`}${event.attempt > 1 ? ` (try ${event.attempt})` : ''}: ${answerText(event.answer)}${start ? `  ${start}` : ''}`;
  if (event.ok) return terminalText(event.answer.status === 200 ? head : `${head}  (note: the service itself retries anything but 200, spec 6)`);
  return terminalText(`${head}  → retry in ${ms(event.retryInMs ?? 0)}, ${event.pending} waiting`);
}

/** A refused request, with the running count for its status, as the status line counts it. */
export function rejectLine(e: Extract<ListenerEvent, { type: 'rejected' }>): string {
  return terminalText(`${e.status} ${e.method} ${e.path}: ${e.reason} (${e.total} answered ${e.status} so far)`);
}

/** The last status line: what was delivered, refused, and what still waits to be forwarded. */
export function summaryLine(stats: ListenerStats, pending: number | undefined, mirror?: { applied: number; unplaced: number }): string {
  const refused = Object.entries(stats.rejected).filter(([, n]) => n > 0);
  const parts = [`${stats.delivered} delivered`, `${refusedTotal(stats)} refused${refused.length ? ` (${refused.map(([s, n]) => `${s}: ${n}`).join(', ')})` : ''}`];
  if (pending !== undefined) parts.push(`${pending} waiting to be forwarded`);
  if (mirror) parts.push(`${mirror.applied} applied to the mirror, ${mirror.unplaced} unplaced (kept in it, no card changed)`);
  return `stopped: ${parts.join(', ')}`;
}

/** `listen --forward-to` starting on a record file whose last deliveries were never forwarded. */
export function resumedForwardText(n: number): string {
  return `Resuming: ${plural(n, 'recorded delivery', 'recorded deliveries')} ${n === 1 ? 'was' : 'were'} never forwarded; sending ${n === 1 ? 'it' : 'them'} first.`;
}

/** `listen --forward-to --record F`: deliveries F held before this run, which it does not forward. */
export function notForwardedText(n: number, record: string, to: string): string {
  const them = n === 1 ? 'it' : 'them';
  return `${plural(n, 'delivery', 'deliveries')} already in ${record} ${n === 1 ? 'is' : 'are'} not forwarded; send ${them} with \`cardboard webhook replay ${record} --to ${to}\`.`;
}

/** `listen --forward-to` stopping with deliveries its spool file still holds. */
export function spoolKeptText(n: number, spool: string): string {
  return `${plural(n, 'delivery', 'deliveries')} ${n === 1 ? 'was' : 'were'} not forwarded; ${n === 1 ? 'it is' : 'they are'} kept in ${spool}. Resume with --record ${spool}.`;
}

/** `webhook replay`'s error when some receiver answers were not 200. */
export function notAnsweredText(failed: number, sent: number): string {
  return `${groupDigits(failed)} of ${plural(sent, 'delivery', 'deliveries')} ${failed === 1 ? 'was' : 'were'} not answered 200`;
}
