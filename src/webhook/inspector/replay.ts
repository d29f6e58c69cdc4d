// A replay asked for by the page or the JSON API: the delivery as recorded, or edited (its headers replaced,
// its body given as text), sent to a URL, and the app's answer as the page shows it.
import { MASK } from '../../redact.js';
import { emptyRecord } from '../../own-keys.js';
import type { Answer } from '../client.js';
import { type Delivery, isSigningHeader, outgoingHeaders, scrubHeaders, SIGNING_HEADER, shownDelivery } from '../delivery.js';
import { jsonErrorOffset } from '../json-bytes.js';
import { HttpError } from './respond.js';

/** What a replay asks for: the URL (else --forward-to), and the edits, if any. */
export interface ReplayInput {
  url?: string;
  /** The headers to send in place of the recorded ones. */
  headers?: Record<string, string>;
  /** The body to send in place of the recorded one, as UTF-8 text. */
  body?: string;
}

/** A replay as the listener reports it (the page's and the API's alike). */
export interface ReplayEvent {
  seq: number;
  url: string;
  /** Whether headers or body were edited. */
  edited: boolean;
  answer: Answer;
}

/** Characters of a replay's answer returned to the page. */
const ANSWER_CHARS = 4096;

/** A header name as HTTP allows it (RFC 9110 5.1, a token). */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** A header value as Node sends it: no line break, no NUL, no character past one byte. */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/** The edited headers' size at most, names and values together: what Node's servers take by default (http.maxHeaderSize). */
const MAX_HEADER_BYTES = 16 * 1024;

const SHAPE = 'expected {"url"?: "<http(s) URL>", "headers"?: {"<name>": "<value>"}, "body"?: "<text>"}';

/** The replay's fields from a parsed action body (`seq` is read by the caller); HttpError 400 naming what is wrong. */
export function replayInput(fields: Record<string, unknown>): ReplayInput {
  const input: ReplayInput = {};
  const url = Object.hasOwn(fields, 'url') ? fields.url : undefined;
  if (url !== undefined && url !== null && typeof url !== 'string') throw new HttpError(400, `"url" must be a string: ${SHAPE}`);
  if (typeof url === 'string' && url !== '') input.url = url;
  if (Object.hasOwn(fields, 'headers') && fields.headers !== undefined && fields.headers !== null) input.headers = editedHeaders(fields.headers);
  if (Object.hasOwn(fields, 'body') && fields.body !== undefined && fields.body !== null) {
    if (typeof fields.body !== 'string') throw new HttpError(400, `"body" must be a string (the text to send): ${SHAPE}`);
    input.body = fields.body;
  }
  return input;
}

/**
 * The edited headers, checked: names HTTP allows, each once (in any letter case), values on one line.
 * x-signingKey is never taken from a request: the listener's key is always the one sent. The editor shows
 * it as `***`, so that value (or none) is accepted and stands for the key; any other value is refused, so
 * that nobody believes a replay went with a key they typed.
 */
function editedHeaders(value: unknown): Record<string, string> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new HttpError(400, `"headers" must be an object of names to values: ${SHAPE}`);
  const out = emptyRecord<string>();
  const seen = new Set<string>();
  let size = 0;
  for (const [name, v] of Object.entries(value as Record<string, unknown>)) {
    // A name is echoed in the error: cut, so that a message stays one short line whatever was sent.
    const shown = JSON.stringify(name.length > 64 ? `${name.slice(0, 64)}…` : name);
    if (!HEADER_NAME.test(name)) throw new HttpError(400, `header ${shown} is not a valid header name (letters, digits and !#$%&'*+-.^_\`|~ only)`);
    if (seen.has(name.toLowerCase())) throw new HttpError(400, `header ${shown} is given twice (names are case-insensitive)`);
    seen.add(name.toLowerCase());
    if (typeof v !== 'string') throw new HttpError(400, `header ${shown} must have a string value`);
    if (!HEADER_VALUE.test(v)) {
      const past = [...v].find((c) => c.codePointAt(0)! > 0xff);
      const why = past === undefined ? 'a line break or a control character' : `${JSON.stringify(past)}, a character past U+00FF that a header cannot carry (percent-encode it)`;
      throw new HttpError(400, `header ${shown} has ${why} in its value`);
    }
    if (isSigningHeader(name) && v !== MASK) throw new HttpError(400, `${SIGNING_HEADER} is always the listener's signing key, never one given here: leave it out or as ${MASK}`);
    out[name] = v;
    size += name.length + v.length + 4;
    if (size > MAX_HEADER_BYTES) throw new HttpError(400, `the headers are ${MAX_HEADER_BYTES} bytes at most together (most servers refuse more): header ${shown} is past that`);
  }
  return out;
}

/** Whether a content type is JSON (application/json, or any type ending in +json). */
function isJsonType(type: string | undefined): boolean {
  const t = (type ?? '').split(';')[0]!.trim().toLowerCase();
  return t === 'application/json' || t.endsWith('+json');
}

/** The value of header `lower` in any letter case. */
function headerValue(headers: Record<string, string>, lower: string): string | undefined {
  for (const [name, value] of Object.entries(headers)) if (name.toLowerCase() === lower) return value;
  return undefined;
}

/** Where a body stops being JSON, for a person: line and column (from 1), and the text there; undefined when it is JSON. */
function jsonError(body: Buffer): string | undefined {
  const offset = jsonErrorOffset(body);
  if (offset === -1) return undefined;
  const before = body.subarray(0, offset).toString('utf8');
  const line = before.split('\n').length;
  const column = before.length - before.lastIndexOf('\n');
  const there = body.subarray(offset, offset + 64).toString('utf8').slice(0, 16);
  return `line ${line}, column ${column}: ${there === '' ? 'it ends there' : `at ${JSON.stringify(there)}`}`;
}

/**
 * The request a replay sends: the recorded headers or the edited ones, less those of one connection
 * (content-length is worked out again from the body), with x-signingKey the listener's key
 * (outgoingHeaders); the recorded bytes or the edited text. A body given with a JSON content type must
 * parse: HttpError 400 naming where it does not.
 */
export function replayRequest(delivery: Delivery, input: ReplayInput, key: string | undefined): { headers: Record<string, string>; body: Buffer } {
  const headers = input.headers ?? delivery.headers;
  const body = input.body === undefined ? delivery.body : Buffer.from(input.body, 'utf8');
  const wrong = input.body !== undefined && isJsonType(headerValue(headers, 'content-type')) ? jsonError(body) : undefined;
  if (wrong) throw new HttpError(400, `the body is not JSON, as its content-type says: it stops being JSON at ${wrong}`);
  return { headers: outgoingHeaders(headers, key), body };
}

/** Whether a replay was edited. */
export function isEdited(input: ReplayInput): boolean {
  return input.headers !== undefined || input.body !== undefined;
}

/**
 * The app's answer without the run's secrets, as the listener reports it (the terminal line, the `{"replay"}`
 * JSON line) and the page shows it: header values scrubbed, the body redacted as a delivery's is shown
 * (shownDelivery: a JSON body's strings decoded first, so a key the app echoed escaped is found too).
 */
export function secretFreeAnswer(answer: Answer, secrets: readonly string[]): Answer {
  if (secrets.length === 0) return answer;
  const body = shownDelivery({ seq: 0, receivedAt: '', method: '', path: '', headers: {}, body: answer.body }, secrets).body;
  return { ...answer, headers: answer.headers && scrubHeaders({ ...answer.headers }, secrets), body };
}

/**
 * The app's answer as the page and the API get it: status, time, headers and the start of the body, with
 * the secrets redacted as the page's deliveries are (a body decoded: shownDelivery; header values scrubbed).
 */
export function answerView(url: string, edited: boolean, answer: Answer, secrets: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = { url, edited, status: answer.status ?? null, ms: Math.round(answer.ms * 10) / 10 };
  if (answer.error !== undefined) out.error = answer.error;
  out.headers = scrubHeaders({ ...answer.headers }, secrets);
  // shownDelivery reads only the body: the answer's, redacted as a delivery's would be, then cut.
  const shown = shownDelivery({ seq: 0, receivedAt: '', method: '', path: '', headers: {}, body: answer.body }, secrets).body;
  const text = shown.toString('utf8');
  out.body = text.slice(0, ANSWER_CHARS);
  if (text.length > ANSWER_CHARS) out.bodyTruncated = true;
  return out;
}
