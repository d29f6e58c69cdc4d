import { MASK, maskBytes, MIN_SUBSTRING_SECRET, redactSecrets, redactValue, scrubSecret } from '../redact.js';
import { emptyRecord } from '../own-keys.js';
import { isJsonText } from './json-bytes.js';
import { LARGE_BODY, type Piece, recordPieces, viewPieces } from './large-lines.js';
import type { Delivery } from './types.js';

/** The header that carries the webhook signing key (spec 6), spelled as the service sends it. */
export const SIGNING_HEADER = 'x-signingKey';
/** The secrets to look for in bodies, as bytes: those of 8 characters or more (a shorter one could match data by chance). */
export function secretNeedles(secrets: readonly string[]): Buffer[] {
  return secrets.filter((s) => s.length >= MIN_SUBSTRING_SECRET).map((s) => Buffer.from(s, 'utf8'));
}

/**
 * The body with every occurrence of each needle (secretNeedles) replaced by `***` (maskBytes), so the record
 * file, the screen and the app never get a secret; the same Buffer, uncopied, when none occurs (the usual case).
 */
export function scrubBody(body: Buffer, needles: readonly Buffer[]): Buffer {
  let out = body;
  for (const needle of needles) out = maskBytes(out, needle);
  return out;
}

/**
 * Whether the decoded view of a body may show a secret that its bytes do not hold as such: a JSON string can
 * spell one with escapes (`whsk\u002d…` for `whsk-…`), and a body recorded by an earlier run may hold a
 * secret of this one literally. A body with no backslash and no secret decodes only to pieces of its bytes:
 * nothing to look for (the usual case, one scan of the bytes).
 */
export function mayShowSecret(body: Buffer, secrets: readonly string[]): boolean {
  const long = secrets.filter((s) => s.length >= MIN_SUBSTRING_SECRET);
  return long.length > 0 && (body.includes(0x5c) || long.some((s) => body.includes(s)));
}

/**
 * A delivery as it is shown decoded (listen's lines and `--json`, the inspector's page and API): when its
 * decoded body would show a secret (mayShowSecret), the body is its JSON value with each secret of 8
 * characters or more replaced by `***` in every string, keys included (redactValue), serialised again, or
 * for a body that is not JSON its text scrubbed. Otherwise, and when nothing was replaced, the same delivery,
 * uncopied. The record file and forwards keep the bytes as received (scrubBody only): this is a view.
 */
export function shownDelivery(delivery: Delivery, secrets: readonly string[]): Delivery {
  if (!mayShowSecret(delivery.body, secrets)) return delivery;
  const text = delivery.body.toString('utf8');
  let shown: string;
  try {
    const value = JSON.parse(text) as unknown;
    const redacted = redactValue(secrets, value);
    shown = JSON.stringify(redacted) === JSON.stringify(value) ? text : JSON.stringify(redacted);
  } catch {
    shown = redactSecrets(secrets, text);
  }
  return shown === text ? delivery : { ...delivery, body: Buffer.from(shown, 'utf8') };
}

/** Header values with the secrets scrubbed (a receiver may be sent the token in another header). */
export function scrubHeaders(headers: Record<string, string>, secrets: readonly string[]): Record<string, string> {
  if (secrets.length === 0) return headers;
  for (const name of Object.keys(headers)) {
    const value = headers[name]!;
    let v = value;
    for (const secret of secrets) v = scrubSecret(v, secret);
    if (v !== value) headers[name] = v;
  }
  return headers;
}

export type { Delivery } from './types.js';

/** The `--json` shape of a delivery: the body parsed when it is JSON, else its text. */
export interface DeliveryView {
  seq: number;
  receivedAt: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body: unknown;
}

/** One line of a record file: the `--json` shape plus the exact body bytes. */
interface RecordLine extends DeliveryView {
  bodyBase64: string;
}

/** Headers a proxy must not copy: they describe one connection, not the message (RFC 9110 7.6.1). */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'host', 'content-length', 'expect']);

/** True for the x-signingKey header in any letter case (spec 6). */
export function isSigningHeader(name: string): boolean {
  return name.toLowerCase() === SIGNING_HEADER.toLowerCase();
}

const SIGNING_LOWER = SIGNING_HEADER.toLowerCase();

/** Build the headers object from Node's rawHeaders (name/value pairs), keeping case and the signing key shown as `***`. */
export function headersFromRaw(raw: readonly string[]): Record<string, string> {
  // Null prototype: a header is the sender's name; one called `__proto__` must be kept as a header.
  const out = emptyRecord<string>();
  const byLower = new Map<string, string>();
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!;
    const lower = name.toLowerCase();
    const signing = lower === SIGNING_LOWER;
    const seen = byLower.get(lower);
    if (seen === undefined) {
      byLower.set(lower, name);
      out[name] = signing ? MASK : raw[i + 1]!;
    } else if (!signing) {
      out[seen] = `${out[seen]}, ${raw[i + 1]}`;
    }
  }
  return out;
}

/**
 * One header's value from Node's rawHeaders, repeats joined with ", " as `req.headers` joins them. Reading
 * rawHeaders directly spares building the whole `req.headers` object for the two headers checked before
 * the body is read (x-signingKey, Content-Length).
 */
export function rawHeader(raw: readonly string[], lowerName: string): string | undefined {
  let value: string | undefined;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length === lowerName.length && name.toLowerCase() === lowerName) value = value === undefined ? raw[i + 1]! : `${value}, ${raw[i + 1]}`;
  }
  return value;
}

/** The body as a value: parsed JSON when it parses, else the text (a non-JSON body is still a delivery). */
export function bodyValue(body: Buffer): unknown {
  const text = body.toString('utf8');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/**
 * The body as JSON text for one line of output. A JSON body without line breaks is copied as it came
 * (validated by a scan of its bytes, neither parsed nor re-serialised): it reads back as the same value,
 * keeps digits a double would round, and leaves no parsed value behind for the GC. Line breaks are only
 * whitespace in JSON text, but NDJSON needs one line per delivery, so such a body is re-serialised; a body
 * that is not JSON becomes a JSON string. isJsonText accepts what JSON.parse accepts of the body's UTF-8
 * text (a byte that is not UTF-8 can only stand inside a string there, where the text has U+FFFD for it).
 */
function bodyJson(body: Buffer): string {
  const text = body.toString('utf8');
  if (!isJsonText(body)) return JSON.stringify(text);
  return body.indexOf(0x0a) === -1 && body.indexOf(0x0d) === -1 ? text.trim() : JSON.stringify(JSON.parse(text));
}

/** What JSON.stringify escapes in a string, and every surrogate (it escapes the lone ones): left to it. */
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/** A string as JSON text, as JSON.stringify writes it; the usual header value needs no escape and no call. */
function jsonString(s: string): string {
  return NEEDS_ESCAPE.test(s) ? JSON.stringify(s) : `"${s}"`;
}

/**
 * The `--json` object of a delivery up to `"body":`, as JSON.stringify would write it (same keys, same
 * order). Written out here because the headers have no prototype, which puts JSON.stringify of the whole
 * head on V8's slow path, which costs more than stringifying each string on its own.
 */
function viewHead(delivery: Delivery): string {
  let out = `{"seq":${JSON.stringify(delivery.seq)},"receivedAt":${jsonString(delivery.receivedAt)},"method":${jsonString(delivery.method)},"path":${jsonString(delivery.path)},"headers":{`;
  let first = true;
  for (const name of Object.keys(delivery.headers)) {
    out += `${first ? '' : ','}${jsonString(name)}:${jsonString(delivery.headers[name]!)}`;
    first = false;
  }
  return `${out}},"body":`;
}

/**
 * The `--json` line of a delivery (without newline). Printing and recording both need it: see
 * recordLinePieces. `tail`: more keys to put after the body (`,"key":…`).
 */
export function viewJson(d: Delivery, tail = ''): string {
  if (d.body.length >= LARGE_BODY) return joinPieces(viewPieces(d, tail));
  return `${viewHead(d)}${bodyJson(d.body)}${tail}}`;
}

/** A `--json` line made by viewJson (or recordLinePieces) with `tail` added after the body. */
export function withTail(view: string, tail: string): string {
  return tail === '' ? view : `${view.slice(0, -1)}${tail}}`;
}

/** Serialise a delivery as one record-file line (with its newline): the `--json` line plus the exact bytes. */
export function toRecordLine(d: Delivery): string {
  return joinPieces(recordLinePieces(d).pieces);
}

function joinPieces(pieces: Iterable<Piece>): string {
  let out = '';
  for (const p of pieces) out += typeof p === 'string' ? p : p.toString('utf8');
  return out;
}

/** The `--json` line of a delivery (without newline) in pieces: a large body is never made one string. */
export function viewLinePieces(d: Delivery, tail = ''): Iterable<Piece> {
  return d.body.length >= LARGE_BODY ? viewPieces(d, tail) : [viewJson(d, tail)];
}

/** A delivery's record line in pieces, with its `--json` line when that was made on the way (a small body). */
interface RecordLinePieces {
  pieces: Iterable<Piece>;
  view: string | undefined;
}

/**
 * The record line of a delivery (with its newline) in pieces; see viewLinePieces. For a small body the
 * `--json` line is made once here and handed on, so printing the delivery need not build it again.
 */
export function recordLinePieces(delivery: Delivery): RecordLinePieces {
  if (delivery.body.length >= LARGE_BODY) return { pieces: recordPieces(delivery), view: undefined };
  const view = viewJson(delivery);
  // In pieces the record file copies each into its write buffer; one string would be joined first, a second copy.
  return { pieces: [view.slice(0, -1), ',"bodyBase64":"', delivery.body.toString('base64'), '"}\n'], view };
}

/** Read one record-file line back; throws on a line that is not a delivery (e.g. cut short by a crash). */
export function parseRecordLine(text: string): Delivery {
  const line = JSON.parse(text) as Partial<RecordLine>;
  if (typeof line !== 'object' || line === null || typeof line.seq !== 'number' || typeof line.bodyBase64 !== 'string' || typeof line.method !== 'string') {
    throw new Error('not a recorded delivery');
  }
  return {
    seq: line.seq,
    receivedAt: String(line.receivedAt),
    method: line.method,
    path: String(line.path ?? '/'),
    headers: Object.assign(emptyRecord<string>(), line.headers),
    body: Buffer.from(line.bodyBase64, 'base64'),
  };
}

/**
 * Headers to re-send a delivery with (forward, replay): the original ones minus those that belong to one
 * connection, and x-signingKey set to the key in use (spec 6), so the receiver's own check passes. The key
 * is never stored, so without one the header is left out.
 */
export function outgoingHeaders(headers: Record<string, string>, key: string | undefined): Record<string, string> {
  const out = emptyRecord<string>();
  let signingName = SIGNING_HEADER;
  for (const [name, value] of Object.entries(headers)) {
    if (isSigningHeader(name)) signingName = name;
    else if (!HOP_BY_HOP.has(name.toLowerCase())) out[name] = value;
  }
  if (key !== undefined) out[signingName] = key;
  return out;
}
