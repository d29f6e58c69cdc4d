// A large delivery's `--json` line and record line, written piece by piece: built whole, one 100 MB body
// cost 1,156 MB of RSS, 11x, in whole-body copies (the text, its parsed value, the line as one string, its
// base64, the line as a Buffer). Here the body Buffer is the only full copy: a JSON body is checked by a
// scan of its bytes and written as it came, the base64 is made a slice at a time. A small body keeps the
// one-string path of delivery.ts, which is faster for the typical card.
import { isUtf8 } from 'node:buffer';
import { StringDecoder } from 'node:string_decoder';
import type { Delivery } from './types.js';
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

const WS = new Set([0x20, 0x09, 0x0a, 0x0d]);
/** The characters after a backslash in a JSON string: " \ / b f n r t (u is checked on its own). */
const ESCAPES = new Set([0x22, 0x5c, 0x2f, 0x62, 0x66, 0x6e, 0x72, 0x74]);
/** Bytes a JSON number is made of. */
const NUMBER_BYTES = new Set([0x2d, 0x2b, 0x2e, 0x45, 0x65, 0x30, 0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39]);

const isHex = (c: number | undefined) => c !== undefined && ((c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66));

/** The end of the JSON string starting at b[i] (`"`), just past its closing quote; -1 if it is not one. */
function stringEnd(b: Buffer, i: number): number {
  if (b[i] !== 0x22) return -1;
  for (i++; i < b.length; ) {
    const c = b[i]!;
    if (c === 0x22) return i + 1;
    if (c < 0x20) return -1;
    if (c !== 0x5c) {
      i++;
      continue;
    }
    const e = b[i + 1];
    if (e === 0x75) {
      for (let k = 2; k < 6; k++) if (!isHex(b[i + k])) return -1;
      i += 6;
    } else if (e !== undefined && ESCAPES.has(e)) i += 2;
    else return -1;
  }
  return -1;
}

/** A whole JSON number; anchored and not global, so testing it changes nothing (no lastIndex). */
const NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/** The end of the number starting at b[i]; -1 if there is none. */
function numberEnd(b: Buffer, i: number): number {
  let j = i;
  while (j < b.length && NUMBER_BYTES.has(b[j]!)) j++;
  return NUMBER.test(b.toString('latin1', i, j)) ? j : -1;
}

/**
 * Whether `b` is one JSON text (RFC 8259) as JSON.parse accepts it, checked without making a string or a
 * value of it. Iterative, so a deeply nested body cannot overflow the stack.
 */
export function isJsonText(b: Buffer): boolean {
  const n = b.length;
  let i = 0;
  const skip = () => {
    while (i < n && WS.has(b[i]!)) i++;
  };
  /** A member's `"name" :`, then the value is expected. */
  const member = (): boolean => {
    i = stringEnd(b, i);
    if (i === -1) return false;
    skip();
    if (b[i] !== 0x3a) return false;
    i++;
    return true;
  };
  const stack: number[] = [];
  skip();
  for (;;) {
    skip();
    const c = b[i];
    if (c === 0x7b || c === 0x5b) {
      i++;
      skip();
      if (b[i] !== (c === 0x7b ? 0x7d : 0x5d)) {
        stack.push(c);
        if (c === 0x7b && !member()) return false;
        continue;
      }
      i++;
    } else if (c === 0x22) {
      i = stringEnd(b, i);
    } else if (c === 0x2d || (c !== undefined && c >= 0x30 && c <= 0x39)) {
      i = numberEnd(b, i);
    } else {
      const word = ['true', 'false', 'null'].find((w) => b.toString('latin1', i, i + w.length) === w);
      i = word ? i + word.length : -1;
    }
    if (i === -1) return false;
    // After a value: close containers, or a comma and the next value.
    for (;;) {
      skip();
      const top = stack.at(-1);
      if (top === undefined) return i === n;
      const d = b[i++];
      if (d === 0x2c) {
        skip();
        if (top === 0x7b && !member()) return false;
        break;
      }
      if (d !== (top === 0x7b ? 0x7d : 0x5d)) return false;
      stack.pop();
    }
  }
}

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
export function* viewPieces(d: Delivery, tail = ''): Generator<Piece> {
  yield head(d);
  yield* bodyJsonPieces(d.body);
  yield `${tail}}`;
}

/** The record line of a large delivery, with its newline, in pieces: the `--json` object plus `bodyBase64`. */
export function* recordPieces(d: Delivery): Generator<Piece> {
  yield head(d);
  yield* bodyJsonPieces(d.body);
  yield ',"bodyBase64":"';
  for (let at = 0; at < d.body.length; at += BASE64_SLICE) yield d.body.toString('base64', at, Math.min(at + BASE64_SLICE, d.body.length));
  yield '"}\n';
}
