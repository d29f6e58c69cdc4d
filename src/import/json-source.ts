// JSON input for `import`: NDJSON streamed line by line, or one JSON array read whole. Values keep
// their JSON types. The items are the CSV reader's: a header (the keys, in first-seen order), then rows with
// their values aligned to it (a key a record lacks is undefined: nothing is sent for it), and `bad` items
// for lines that are not a JSON object, with their text, so one bad line never stops the file.
import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { TextDecoder } from 'node:util';
import { UsageError } from '../errors.js';
import { shorten } from '../io/width.js';
import { ownValue } from '../own-keys.js';
import { LineSplitter } from './lines.js';
import type { CsvItem } from './types.js';

/** Records read ahead on stdin to learn the keys (a file is read once beforehand instead). */
const STDIN_KEY_RECORDS = 1000;
/** The largest JSON array file read whole; larger inputs should be NDJSON, which streams. */
const MAX_JSON_ARRAY_BYTES = 256 * 1024 * 1024;
/** Columns of a rejected line kept in its reason. */
const SHOWN = 200;

type Parsed = { ok: true; record: Record<string, unknown> } | { ok: false; reason: string };

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function parseLine(text: string): Parsed {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { ok: false, reason: `not JSON (${(err as Error).message}): ${shorten(text, SHOWN)}` };
  }
  if (!isRecord(value)) return { ok: false, reason: `not a JSON object: ${shorten(text, SHOWN)}` };
  return { ok: true, record: value };
}

/**
 * Lines of a stream with their 1-based numbers, split as the CSV reader splits them (lines.ts: CRLF, LF or
 * CR, in any mix); blank lines skipped. UTF-8; the decoder drops a byte order mark at the start.
 */
async function* lines(input: Readable | AsyncIterable<Buffer>): AsyncGenerator<{ line: number; text: string }> {
  const decoder = new TextDecoder('utf-8');
  const splitter = new LineSplitter();
  let count = 0;
  let ready: { line: number; text: string }[] = [];
  const take = (text: string) => {
    count++;
    if (text.trim() !== '') ready.push({ line: count, text: text.charCodeAt(0) === 0xfeff ? text.slice(1) : text });
  };
  for await (const chunk of input as AsyncIterable<Buffer | string>) {
    splitter.push(decoder.decode(typeof chunk === 'string' ? Buffer.from(chunk) : chunk, { stream: true }), take);
    const out = ready;
    ready = [];
    // Not `yield*`: over an array it wraps every line in one more promise.
    for (const l of out) yield l;
  }
  splitter.push(decoder.decode(), take);
  splitter.end(take);
  for (const l of ready) yield l;
}

/** Every key of an NDJSON file, in first-seen order (one streamed pass before the import). */
export async function ndjsonKeys(path: string): Promise<string[]> {
  const keys = new Set<string>();
  for await (const { text } of lines(createReadStream(path))) {
    const parsed = parseLine(text);
    if (parsed.ok) for (const k of Object.keys(parsed.record)) keys.add(k);
  }
  return [...keys];
}

function toItem(line: number, parsed: Parsed, headers: string[], known: Set<string>): CsvItem {
  if (!parsed.ok) return { kind: 'bad', line, values: [], reason: parsed.reason };
  const extra = Object.keys(parsed.record).find((k) => !known.has(k));
  const values = headers.map((h) => ownValue(parsed.record, h));
  if (extra !== undefined) {
    return { kind: 'bad', line, values, reason: `key '${extra}' is not among the keys of the first ${STDIN_KEY_RECORDS} records, so it has no mapping; not sent` };
  }
  return { kind: 'row', line, values };
}

/**
 * Read NDJSON: a header of `keys` (a file's, from ndjsonKeys), else of the keys in the first
 * STDIN_KEY_RECORDS records, then one row per line. Streams: memory does not grow with the input.
 */
export async function* readNdjson(input: Readable | AsyncIterable<Buffer>, keys?: string[]): AsyncGenerator<CsvItem> {
  const it = lines(input)[Symbol.asyncIterator]();
  const ahead: { line: number; parsed: Parsed }[] = [];
  let headers = keys;
  if (headers === undefined) {
    const seen = new Set<string>();
    while (ahead.length < STDIN_KEY_RECORDS) {
      const next = await it.next();
      if (next.done) break;
      const parsed = parseLine(next.value.text);
      if (parsed.ok) for (const k of Object.keys(parsed.record)) seen.add(k);
      ahead.push({ line: next.value.line, parsed });
    }
    headers = [...seen];
  }
  const known = new Set(headers);
  yield { kind: 'header', line: 0, headers };
  for (const a of ahead) yield toItem(a.line, a.parsed, headers, known);
  for (let n = await it.next(); !n.done; n = await it.next()) yield toItem(n.value.line, parseLine(n.value.text), headers, known);
}

/** Read a JSON array file whole (up to MAX_JSON_ARRAY_BYTES): element i is "line" i + 1 in every report. */
export async function* readJsonArray(path: string): AsyncGenerator<CsvItem> {
  const { size } = await stat(path);
  if (size > MAX_JSON_ARRAY_BYTES) {
    throw new UsageError(`${path} is ${Math.round(size / 1048576)} MB: a JSON array is read whole, up to ${MAX_JSON_ARRAY_BYTES / 1048576} MB.`, {
      hint: 'Write it as NDJSON (one object per line, e.g. `jq -c ".[]"`) and pass --input-format ndjson: that streams.',
    });
  }
  let data: unknown;
  try {
    data = JSON.parse((await readFile(path, 'utf8')).replace(/^\uFEFF/, ''));
  } catch (err) {
    throw new UsageError(`${path} is not valid JSON (${(err as Error).message}); nothing was sent.`);
  }
  if (!Array.isArray(data)) throw new UsageError(`${path} is not a JSON array of objects; nothing was sent.`, { hint: 'For one object per line, use --input-format ndjson.' });
  const keys = new Set<string>();
  for (const r of data) if (isRecord(r)) for (const k of Object.keys(r)) keys.add(k);
  const headers = [...keys];
  yield { kind: 'header', line: 0, headers };
  for (let i = 0; i < data.length; i++) {
    const r: unknown = data[i];
    const parsed: Parsed = isRecord(r) ? { ok: true, record: r } : { ok: false, reason: `element ${i + 1} is not a JSON object: ${shorten(String(JSON.stringify(r)), SHOWN)}` };
    yield toItem(i + 1, parsed, headers, keys);
  }
}
