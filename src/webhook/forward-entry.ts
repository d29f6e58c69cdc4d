// The app's answer to one forward try as it is kept: in the record file's forward entries, in the forward
// lines of `listen --json`, in the inspector's detail. Bounded (the body's first ANSWER_BODY_BYTES) and
// without the run's secrets, whatever the app echoed.
import { emptyRecord } from '../own-keys.js';
import { redactValue, scrubSecret } from '../redact.js';
import type { Answer } from './client.js';
import { mayShowSecret, scrubBody, secretNeedles } from './delivery.js';
import { isJsonText } from './json-bytes.js';

/** Bytes of the start of an answer's body that are kept with each forward try. */
export const ANSWER_BODY_BYTES = 4096;

/** An answer as it is kept: its status (null when none came), time, headers and the start of its body, or the network error. */
export interface AnswerView {
  status: number | null;
  /** Milliseconds, rounded to 0.1. */
  ms: number;
  /** Absent when no answer came. */
  headers?: Record<string, string>;
  /** The body's first ANSWER_BODY_BYTES as a value: parsed JSON when it parses, else its text (bodyValue). */
  body?: unknown;
  /** The body was longer than what is kept. */
  bodyTruncated?: true;
  /** Only when no answer came (ECONNREFUSED, timed out after …). */
  error?: string;
}

/** One forward try as a record file keeps it (a line `{"forward":{…}}`), and `listen --json` prints it. */
export interface ForwardEntry extends AnswerView {
  [RAW_BODY]?: string;
  seq: number;
  url: string;
  attempt: number;
  ok: boolean;
  /** When the try ended (ISO 8601 UTC). */
  at: string;
}

/**
 * `bytes` cut to at most `max`, on a character's start so the text does not end in half a UTF-8
 * sequence, and without a trailing start of one of the secrets (a secret cut in two is not one that
 * scrubbing finds, but its first half must not be shown either).
 */
function cut(bytes: Buffer, max: number, needles: readonly Buffer[]): Buffer {
  if (bytes.length <= max) return bytes;
  let end = max;
  // A byte 10xxxxxx continues the character before it: the cut moves back to that character's first byte.
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  let out = bytes.subarray(0, end);
  for (const needle of needles) {
    for (let n = Math.min(needle.length - 1, out.length); n > 0; n--) {
      if (out.subarray(out.length - n).equals(needle.subarray(0, n))) {
        out = out.subarray(0, out.length - n);
        break;
      }
    }
  }
  return out;
}

/**
 * Bytes as a value, as delivery.ts's bodyValue makes it (parsed JSON, else the text), but checked by a scan
 * first (isJsonText accepts what JSON.parse does): an app's answer is often not JSON, and a parse that
 * throws costs more than the rest of an entry. A body cut short is its text whatever it parses as: the
 * first 4 KiB of a long number would parse as Infinity (written null), not as the start of what was sent.
 */
function bytesValue(bytes: Buffer, truncated = false): unknown {
  const text = bytes.toString('utf8');
  return !truncated && isJsonText(bytes) ? (JSON.parse(text) as unknown) : text;
}

/**
 * The kept body's JSON text, on an entry whose body is JSON the app sent whole, on one line and without a
 * secret: forwardLineJson writes it as it came, so a record file and `listen --json` keep the digits a
 * double would round (an id of 20 digits, 1.10), as a delivery's line keeps its body's. A symbol key, so
 * the entry's own JSON.stringify (the inspector's) leaves it out.
 */
const RAW_BODY = Symbol('the body as JSON text');

/** `view` holding `raw` as its RAW_BODY, not enumerable: an entry compares and spreads as its fields alone. */
function withRawBody<T extends AnswerView>(view: T, raw: string | undefined): T {
  if (raw !== undefined) Object.defineProperty(view, RAW_BODY, { value: raw, enumerable: false });
  return view;
}

/** The start of an answer's body, scrubbed of the secrets, and whether there was more; `needles`: secretNeedles(secrets), when made already. */
export function answerBodyStart(body: Buffer, secrets: readonly string[], needles: readonly Buffer[] = secretNeedles(secrets)): { bytes: Buffer; truncated: boolean } {
  const scrubbed = scrubBody(body, needles);
  const bytes = cut(scrubbed, ANSWER_BODY_BYTES, needles);
  return { bytes, truncated: bytes.length < scrubbed.length };
}

/**
 * The start of an answer's body as text for a person: the text of its bytes (answerBodyStart), or, when it
 * is JSON that spells a secret with escapes, its value with the secrets redacted, serialised again.
 */
export function answerBodyText(bytes: Buffer, secrets: readonly string[]): string {
  const text = bytes.toString('utf8');
  if (!mayShowSecret(bytes, secrets)) return text;
  const value = bytesValue(bytes);
  const redacted = redactValue(secrets, value);
  if (typeof redacted === 'string') return redacted;
  return JSON.stringify(redacted) === JSON.stringify(value) ? text : JSON.stringify(redacted);
}

/** Header names and values with each secret replaced by `***` (scrubSecret); a name like `__proto__` stays a header. */
function scrubbedHeaders(headers: Record<string, string>, secrets: readonly string[]): Record<string, string> {
  const out = emptyRecord<string>();
  for (const [name, value] of Object.entries(headers)) {
    let n = name;
    let v = value;
    for (const secret of secrets) {
      n = scrubSecret(n, secret);
      v = scrubSecret(v, secret);
    }
    out[n] = v;
  }
  return out;
}

/** An answer as it is kept (AnswerView), with the secrets scrubbed from its headers and body; `needles` as for answerBodyStart. */
export function answerView(answer: Answer, secrets: readonly string[], needles?: readonly Buffer[]): AnswerView {
  const v: AnswerView = { status: answer.status ?? null, ms: Math.round(answer.ms * 10) / 10 };
  if (answer.status !== undefined) {
    const { bytes, truncated } = answerBodyStart(answer.body, secrets, needles);
    v.headers = scrubbedHeaders(answer.headers ?? {}, secrets);
    // A JSON body may spell a secret with escapes that its bytes do not hold as such: redacted once decoded.
    const value = bytesValue(bytes, truncated);
    const secret = mayShowSecret(bytes, secrets);
    v.body = secret ? redactValue(secrets, value) : value;
    if (truncated) v.bodyTruncated = true;
    else if (!secret && answer.error === undefined && bytes.indexOf(0x0a) === -1 && bytes.indexOf(0x0d) === -1 && isJsonText(bytes)) {
      withRawBody(v, bytes.toString('utf8').trim());
    }
  }
  if (answer.error !== undefined) v.error = answer.error;
  return v;
}

/** A forward try (the forwarder's ForwardEvent) as a record file keeps it; `at`: when it ended; `needles` as for answerBodyStart. */
export function forwardEntry(event: { seq: number; url: string; attempt: number; ok: boolean; answer: Answer }, at: string, secrets: readonly string[], needles?: readonly Buffer[]): ForwardEntry {
  const view = answerView(event.answer, secrets, needles);
  const { status, ms, ...rest } = view;
  return withRawBody({ seq: event.seq, url: event.url, attempt: event.attempt, ok: event.ok, at, status, ms, ...rest }, (view as ForwardEntry)[RAW_BODY]);
}

/** A record file's forward line as text (without its newline): never starts as a delivery's, `{"seq":`. */
export function forwardLineJson(entry: ForwardEntry): string {
  const raw = entry[RAW_BODY];
  if (raw === undefined) return JSON.stringify({ forward: entry });
  // The keys in the entry's order (body last but the flags after it, absent here: whole, and an answer came).
  const { body: _body, ...head } = entry;
  return `${JSON.stringify({ forward: head }).slice(0, -2)},"body":${raw}}}`;
}

/** A forward line read back, or undefined when the line is not one (cut short by a crash, another shape). */
export function parseForwardLine(text: string): ForwardEntry | undefined {
  try {
    const line = JSON.parse(text) as { forward?: Partial<ForwardEntry> } | null;
    const f = line?.forward;
    if (typeof f !== 'object' || f === null || typeof f.seq !== 'number' || typeof f.attempt !== 'number' || typeof f.ok !== 'boolean') return undefined;
    return f as ForwardEntry;
  } catch {
    return undefined;
  }
}
