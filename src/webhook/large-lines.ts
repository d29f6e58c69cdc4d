// A large delivery's `--json` line and record line, written piece by piece, and such a record line read
// back. The body Buffer is the only full copy: a JSON body is checked by a scan of its bytes (json-bytes.ts)
// and written as it came, the base64 is made a slice at a time; building the line whole would copy the
// body several times over (the text, its parsed value, the line as one string, its base64, the line as a
// Buffer). A small body keeps the one-string path of delivery.ts, which is faster for the typical card.
import { isUtf8 } from 'node:buffer';
import { StringDecoder } from 'node:string_decoder';
import type { Delivery } from './types.js';
import { isJsonText } from './json-bytes.js';
import { emptyRecord } from '../own-keys.js';

/** A piece of a line: text, or bytes written as they are. */
export type Piece = string | Buffer;

/** Bodies of at least this many bytes are written in pieces. */
export const LARGE_BODY = 64 * 1024;

/** Bytes of body per piece. */
const SLICE = 256 * 1024;
/**
 * Bytes of body per base64 piece: a multiple of 3, so each slice's base64 joins the next one's without
 * padding, and small enough (64 KiB of text) for V8's young generation, where garbage is cheap and soon gone.
 */
const BASE64_SLICE = 3 * 16 * 1024;

/** The body as JSON text in pieces: its own bytes when it is JSON (line breaks, only ever whitespace there, made spaces), else a JSON string of its text. */
function* bodyJsonPieces(body: Buffer): Generator<Piece> {
  if (isUtf8(body) && isJsonText(body)) {
    if (body.indexOf(0x0a) === -1 && body.indexOf(0x0d) === -1) {
      yield body;
      return;
    }
    // One line per delivery: a raw CR or LF can only be whitespace in JSON text, so a space keeps the value.
    for (let at = 0; at < body.length; at += SLICE) {
      const slice = Buffer.from(body.subarray(at, at + SLICE));
      for (const byte of [0x0a, 0x0d]) for (let k = slice.indexOf(byte); k !== -1; k = slice.indexOf(byte, k + 1)) slice[k] = 0x20;
      yield slice;
    }
    return;
  }
  const decoder = new StringDecoder('utf8');
  yield '"';
  for (let at = 0; at < body.length; at += SLICE) {
    const text = decoder.write(body.subarray(at, at + SLICE));
    if (text !== '') yield JSON.stringify(text).slice(1, -1);
  }
  const rest = decoder.end();
  if (rest !== '') yield JSON.stringify(rest).slice(1, -1);
  yield '"';
}

const BODY_KEY = Buffer.from(',"body":');
const BASE64_KEY = Buffer.from(',"bodyBase64":"');

/** Base64 text decoded a slice at a time into one Buffer: no string of the whole text is made. */
function decodeBase64(text: Buffer): Buffer {
  const out = Buffer.allocUnsafe(Math.floor((text.length * 3) / 4));
  let n = 0;
  for (let at = 0; at < text.length; at += 64 * 1024) n += out.write(text.toString('latin1', at, Math.min(at + 64 * 1024, text.length)), n, 'base64');
  return out.subarray(0, n);
}

/**
 * A large record line as this module writes it, read back without making a string of it: the head
 * (seq … headers) is parsed on its own, the body decoded from `bodyBase64`, the `body` view skipped.
 * Undefined for a line of another shape (written by hand, another order): parse it whole then.
 */
export function parseLargeRecordLine(line: Buffer): Delivery | undefined {
  const at = line.lastIndexOf(BASE64_KEY);
  const end = line.length - 2;
  if (at === -1 || line[end] !== 0x22 || line[end + 1] !== 0x7d || line.indexOf(0x22, at + BASE64_KEY.length) !== end) return undefined;
  // The first `,"body":` after which the head closes as JSON is the real one: one inside the headers
  // (a header named body) leaves them unclosed, and a quote inside a string is always escaped.
  for (let k = line.indexOf(BODY_KEY); k !== -1 && k < at; k = line.indexOf(BODY_KEY, k + 1)) {
    let head: Partial<Delivery>;
    try {
      head = JSON.parse(`${line.toString('utf8', 0, k)}}`) as Partial<Delivery>;
    } catch {
      continue;
    }
    if (typeof head.seq !== 'number' || typeof head.method !== 'string' || typeof head.headers !== 'object' || head.headers === null) return undefined;
    return { seq: head.seq, receivedAt: String(head.receivedAt), method: head.method, path: String(head.path ?? '/'), headers: Object.assign(emptyRecord<string>(), head.headers), body: decodeBase64(line.subarray(at + BASE64_KEY.length, end)) };
  }
  return undefined;
}

/** The `--json` object of a delivery up to `"body":`. */
function head(d: Delivery): string {
  return `${JSON.stringify({ seq: d.seq, receivedAt: d.receivedAt, method: d.method, path: d.path, headers: d.headers }).slice(0, -1)},"body":`;
}

/** The `--json` line of a large delivery, without its newline, in pieces. */
export function* viewPieces(delivery: Delivery, tail = ''): Generator<Piece> {
  yield head(delivery);
  yield* bodyJsonPieces(delivery.body);
  yield `${tail}}`;
}

/** The record line of a large delivery, with its newline, in pieces: the `--json` object plus `bodyBase64`. */
export function* recordPieces(delivery: Delivery): Generator<Piece> {
  yield head(delivery);
  yield* bodyJsonPieces(delivery.body);
  yield ',"bodyBase64":"';
  for (let at = 0; at < delivery.body.length; at += BASE64_SLICE) yield delivery.body.toString('base64', at, Math.min(at + BASE64_SLICE, delivery.body.length));
  yield '"}\n';
}
