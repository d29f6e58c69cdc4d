import { STATUS_CODES } from 'node:http';
import { oneLine, quoted, terminalText } from '../../io/text.js';
import { shorten } from '../../io/width.js';
import type { Delivery } from '../../webhook/delivery.js';
import type { ForwardEvent } from '../../webhook/forwarder.js';
import type { ListenerEvent, ListenerStats } from '../../webhook/listener.js';
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

/** One readable line for a delivery: time, seq, card `_id` and its first few fields, size. */
export function deliveryLine(d: Delivery, fields = 3): string {
  const time = d.receivedAt.slice(11, 23);
  // A line shows a few fields: a body past this is not decoded and parsed for it, which would hold two or
  // three more copies of it at once (issue 11: a large body costs at most about twice its size).
  if (d.body.length > LINE_PARSE_MAX_BYTES) {
    return terminalText(`${time}  #${d.seq}  ${d.method} ${d.path}  body not parsed for this line (over ${formatBytes(LINE_PARSE_MAX_BYTES)}; --json shows it)  ${formatBytes(d.body.length)}`);
  }
  const text = d.body.toString('utf8');
  let body: unknown;
  let json = true;
  try {
    body = JSON.parse(text) as unknown;
  } catch {
    json = false;
  }
  let what: string;
  if (typeof body === 'object' && body !== null && !Array.isArray(body)) {
    const card = body as Record<string, unknown>;
    const rest = Object.entries(card)
      .filter(([k]) => k !== '_id')
      .slice(0, fields)
      .map(([k, v]) => `${k}=${short(v)}`);
    what = [`card ${card._id === undefined ? '(no _id)' : short(card._id, 26)}`, ...rest].join('  ');
  } else if (json) {
    // An array, a number, a string, true or null: shown as the JSON it is (issue 12: `[1,2,3]` showed as text "1,2,3").
    what = `json ${short(JSON.stringify(body), 40)}`;
  } else {
    what = `text ${quoted(short(text, 40))}`;
  }
  return terminalText(`${time}  #${d.seq}  ${d.method} ${d.path}  ${what}  ${formatBytes(d.body.length)}`);
}

/** An answer as `200 OK in 3.1 ms`, or the network failure. */
export function answerText(answer: { status?: number; ms: number; error?: string }): string {
  if (answer.status === undefined) return terminalText(`no answer (${answer.error ?? 'failed'}) after ${ms(answer.ms)}`);
  return `${answer.status} ${STATUS_CODES[answer.status] ?? ''} in ${ms(answer.ms)}`.replace('  ', ' ');
}

/** One line per forward try: status, time, the start of the app's answer, and the retry plan on failure. */
export function forwardLine(e: ForwardEvent): string {
  const start = answerStart(e.answer.body);
  const head = `  ↳ #${e.seq} forward${e.attempt > 1 ? ` (try ${e.attempt})` : ''}: ${answerText(e.answer)}${start ? `  ${start}` : ''}`;
  if (e.ok) return terminalText(e.answer.status === 200 ? head : `${head}  (note: the service itself retries anything but 200, spec 6)`);
  return terminalText(`${head}  → retry in ${ms(e.retryInMs ?? 0)}, ${e.pending} waiting`);
}

/** A refused request, with the running count for its status (issue 5: counted in the status line). */
export function rejectLine(e: Extract<ListenerEvent, { type: 'rejected' }>): string {
  return terminalText(`${e.status} ${e.method} ${e.path}: ${e.reason} (${e.total} answered ${e.status} so far)`);
}

/** Requests refused so far, whatever the status. */
export function refusedTotal(stats: ListenerStats): number {
  return Object.values(stats.rejected).reduce((sum, n) => sum + n, 0);
}

/** The last status line: what was delivered, refused, and what still waits to be forwarded. */
export function summaryLine(stats: ListenerStats, pending: number | undefined): string {
  const refused = Object.entries(stats.rejected).filter(([, n]) => n > 0);
  const parts = [`${stats.delivered} delivered`, `${refusedTotal(stats)} refused${refused.length ? ` (${refused.map(([s, n]) => `${s}: ${n}`).join(', ')})` : ''}`];
  if (pending !== undefined) parts.push(`${pending} waiting to be forwarded`);
  return `stopped: ${parts.join(', ')}`;
}
