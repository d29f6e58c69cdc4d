import { MIN_SUBSTRING_SECRET, scrubSecret } from '../redact.js';
import { emptyRecord } from '../own-keys.js';
import { LARGE_BODY, type Piece, recordPieces, viewPieces } from './pieces.js';

/** The header that carries the webhook signing key (spec 6), spelled as the service sends it. */
export const SIGNING_HEADER = 'x-signingKey';
/** What stands in for the signing key wherever a delivery is printed or recorded. */
export const REDACTED = '[redacted]';

/** What stands in for a secret found in a delivery's body or headers (issue 11 §7). */
const MASK = Buffer.from('***');

/** The secrets to look for in bodies, as bytes: those of 8 characters or more (a shorter one could match data by chance). */
export function secretNeedles(secrets: readonly string[]): Buffer[] {
  return secrets.filter((s) => s.length >= MIN_SUBSTRING_SECRET).map((s) => Buffer.from(s, 'utf8'));
}

/** The body with every occurrence of each needle (secretNeedles) replaced by `***`; the same Buffer, uncopied, when none occurs (the usual case). */
export function scrubBody(body: Buffer, needles: readonly Buffer[]): Buffer {
  let out = body;
  for (const needle of needles) {
    let at = out.indexOf(needle);
    if (at === -1) continue;
    const parts: Buffer[] = [];
    let from = 0;
    for (; at !== -1; at = out.indexOf(needle, from)) {
      parts.push(out.subarray(from, at), MASK);
      from = at + needle.length;
    }
    parts.push(out.subarray(from));
    out = Buffer.concat(parts);
  }
  return out;
}

/** Header values with the secrets scrubbed (a receiver may be sent the token in another header). */
export function scrubHeaders(headers: Record<string, string>, secrets: readonly string[]): Record<string, string> {
  for (const [name, value] of Object.entries(headers)) {
    let v = value;
    for (const secret of secrets) v = scrubSecret(v, secret);
    if (v !== value) headers[name] = v;
  }
  return headers;
}

/** One verified webhook request as received: exact body bytes, headers with the signing key redacted. */
export interface Delivery {
  /** 1, 2, 3… in arrival order; continues across restarts with the same record file. */
  seq: number;
  /** ISO 8601 UTC with milliseconds. */
  receivedAt: string;
  method: string;
  /** The request target: path and query as sent. */
  path: string;
  /** Header names as sent (original case), repeated headers joined with ", "; the signing key redacted. */
  headers: Record<string, string>;
  body: Buffer;
}

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
export interface RecordLine extends DeliveryView {
  bodyBase64: string;
}

/** Headers a proxy must not copy: they describe one connection, not the message (RFC 9110 7.6.1). */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'host', 'content-length', 'expect']);

/** True for the x-signingKey header in any letter case (spec 6). */
export function isSigningHeader(name: string): boolean {
  return name.toLowerCase() === SIGNING_HEADER.toLowerCase();
}

/** Build the headers object from Node's rawHeaders (name/value pairs), keeping case and hiding the key. */
export function headersFromRaw(raw: readonly string[]): Record<string, string> {
  // Null prototype: a header is the sender's name; one called `__proto__` must be kept as a header.
  const out = emptyRecord<string>();
  const byLower = new Map<string, string>();
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!;
    const value = isSigningHeader(name) ? REDACTED : raw[i + 1]!;
    const seen = byLower.get(name.toLowerCase());
    if (seen === undefined) {
      byLower.set(name.toLowerCase(), name);
      out[name] = value;
    } else if (!isSigningHeader(name)) {
      out[seen] = `${out[seen]}, ${value}`;
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
 * (validated by JSON.parse, not re-serialised): it reads back as the same value, keeps digits a double
 * would round, and costs half as much. Line breaks are only whitespace in JSON text, but NDJSON needs one
 * line per delivery, so such a body is re-serialised; a body that is not JSON becomes a JSON string.
 */
function bodyJson(body: Buffer): string {
  const text = body.toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return JSON.stringify(text);
  }
  return text.includes('\n') || text.includes('\r') ? JSON.stringify(value) : text.trim();
}

const viewJsonCache = new WeakMap<Delivery, string>();

/**
 * The `--json` line of a delivery (without newline), built once per delivery: printing and recording
 * both need it, and it is most of the per-delivery work.
 */
export function viewJson(d: Delivery): string {
  if (d.body.length >= LARGE_BODY) return joinPieces(viewPieces(d));
  let json = viewJsonCache.get(d);
  if (json === undefined) {
    const head = JSON.stringify({ seq: d.seq, receivedAt: d.receivedAt, method: d.method, path: d.path, headers: d.headers });
    json = `${head.slice(0, -1)},"body":${bodyJson(d.body)}}`;
    viewJsonCache.set(d, json);
  }
  return json;
}

/** Serialise a delivery as one record-file line (with its newline): the `--json` line plus the exact bytes. */
export function toRecordLine(d: Delivery): string {
  if (d.body.length >= LARGE_BODY) return joinPieces(recordPieces(d));
  return `${viewJson(d).slice(0, -1)},"bodyBase64":"${d.body.toString('base64')}"}\n`;
}

function joinPieces(pieces: Iterable<Piece>): string {
  let out = '';
  for (const p of pieces) out += typeof p === 'string' ? p : p.toString('utf8');
  return out;
}

/** The `--json` line of a delivery (without newline) in pieces: a large body is never made one string. */
export function viewLinePieces(d: Delivery): Iterable<Piece> {
  return d.body.length >= LARGE_BODY ? viewPieces(d) : [viewJson(d)];
}

/** The record line of a delivery (with its newline) in pieces; see viewLinePieces. */
export function recordLinePieces(d: Delivery): Iterable<Piece> {
  return d.body.length >= LARGE_BODY ? recordPieces(d) : [toRecordLine(d)];
}

/** Read one record-file line back; throws on a line that is not a delivery (e.g. cut short by a crash). */
export function parseRecordLine(text: string): Delivery {
  const v = JSON.parse(text) as Partial<RecordLine>;
  if (typeof v !== 'object' || v === null || typeof v.seq !== 'number' || typeof v.bodyBase64 !== 'string' || typeof v.method !== 'string') {
    throw new Error('not a recorded delivery');
  }
  return {
    seq: v.seq,
    receivedAt: String(v.receivedAt),
    method: v.method,
    path: String(v.path ?? '/'),
    headers: Object.assign(emptyRecord<string>(), v.headers),
    body: Buffer.from(v.bodyBase64, 'base64'),
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
