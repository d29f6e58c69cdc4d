// Streaming CSV reader: bytes → TextDecoder → csv-parse (stream API) → records with their STARTING line.
// csv-parse's info.lines is the line where a record ends and drifts in CRLF files (PITFALLS), so the
// start line is computed here from the byte offsets the parser reports and our own count of line breaks.
import type { Readable } from 'node:stream';
import { TextDecoder } from 'node:util';
import type { Options as ParseOptions } from 'csv-parse';
import { UsageError } from '../errors.js';
import type { CsvItem } from './types.js';

/** How to read the input. */
export interface ReadOptions {
  /** One character; detected from the header line among `,` `;` tab when absent. */
  delimiter?: string;
  /** Any label Node's TextDecoder knows (utf-8, latin1, utf-16le, ...); default utf-8. */
  encoding?: string;
}

const CANDIDATES = [',', ';', '\t'];
/** A record longer than this is an unclosed quote swallowing the file, not data: keeps memory flat. */
const MAX_RECORD_CHARS = 1_000_000;

/** A TextDecoder for `encoding`, or a UsageError naming the flag (the label is checked before reading). */
export function makeDecoder(encoding = 'utf-8'): TextDecoder {
  try {
    // ignoreBOM false (default): a UTF-8 or UTF-16 byte order mark is stripped.
    return new TextDecoder(encoding);
  } catch {
    throw new UsageError(`Unknown --encoding '${encoding}'.`, {
      hint: 'Use an encoding Node supports, e.g. utf-8, latin1, windows-1252, utf-16le.',
    });
  }
}

/** Pick the delimiter that occurs most often outside quotes in the header line (ties: comma). */
export function detectDelimiter(headerLine: string): string {
  const counts = new Map<string, number>(CANDIDATES.map((c) => [c, 0]));
  let quoted = false;
  for (const ch of headerLine) {
    if (ch === '"') quoted = !quoted;
    else if (!quoted && counts.has(ch)) counts.set(ch, counts.get(ch)! + 1);
  }
  let best = ',';
  for (const c of CANDIDATES) if (counts.get(c)! > counts.get(best)!) best = c;
  return best;
}

/** Counts line breaks (LF, CRLF, lone CR) up to a byte offset of the stream fed to the parser. */
class LineTracker {
  private chunks: Buffer[] = [];
  private chunkStart = 0;
  private pos = 0;
  private breaks = 0;
  private prevCR = false;

  push(buf: Buffer): void {
    this.chunks.push(buf);
  }

  /** 1-based line number of the byte at `offset`. Offsets must not go backwards. */
  lineAt(offset: number): number {
    while (this.pos < offset && this.chunks.length > 0) {
      const chunk = this.chunks[0]!;
      const end = Math.min(offset - this.chunkStart, chunk.length);
      for (let i = this.pos - this.chunkStart; i < end; i++) {
        const b = chunk[i];
        if (b === 0x0d) this.breaks++;
        else if (b === 0x0a && !this.prevCR) this.breaks++;
        this.prevCR = b === 0x0d;
      }
      this.pos = this.chunkStart + end;
      if (end === chunk.length) {
        this.chunks.shift();
        this.chunkStart += chunk.length;
      }
    }
    return this.breaks + 1;
  }
}

function validDelimiter(d: string | undefined): string | undefined {
  if (d === undefined) return undefined;
  const named: Record<string, string> = { tab: '\t', '\\t': '\t', comma: ',', semicolon: ';' };
  const value = named[d] ?? d;
  if (value.length !== 1 || value === '"' || value === '\n' || value === '\r') {
    throw new UsageError(`Invalid --delimiter '${d}'.`, { hint: 'Use one character, e.g. , ; or tab.' });
  }
  return value;
}

/**
 * Read CSV records from a byte stream: first the header, then each row with its starting line number,
 * blank lines dropped, malformed records (unclosed quote, wrong column count) reported as `bad` items.
 * Pulls from `input` only as fast as the consumer iterates (backpressure all the way to the file).
 */
export async function* readCsv(input: Readable | AsyncIterable<Buffer>, opts: ReadOptions = {}): AsyncGenerator<CsvItem> {
  const { parse } = await import('csv-parse');
  const decoder = makeDecoder(opts.encoding);
  const chunks = (input as AsyncIterable<Buffer | string>)[Symbol.asyncIterator]();
  const decode = (chunk: Buffer | string) => decoder.decode(typeof chunk === 'string' ? Buffer.from(chunk) : chunk, { stream: true });

  // Read up to the end of the header line first: the delimiter is detected from it.
  let head = '';
  let ended = false;
  while (!/[\r\n]/.test(head) && head.length < 65_536) {
    const next = await chunks.next();
    if (next.done) {
      head += decoder.decode();
      ended = true;
      break;
    }
    head += decode(next.value);
  }
  const delimiter = validDelimiter(opts.delimiter) ?? detectDelimiter(head.split(/[\r\n]/)[0] ?? '');

  const tracker = new LineTracker();
  let prevEnd = 0;
  let fed = 0;
  let lastByte = 0;
  let columns = -1;
  let skipped: CsvItem[] = [];
  const parser = parse({
    delimiter,
    relax_quotes: true, // a stray quote inside an unquoted field is data, and no line is silently lost
    relax_column_count: true, // checked below, so the row is reported instead of failing the stream
    skip_records_with_error: true,
    max_record_size: MAX_RECORD_CHARS,
    on_record: (record: string[], info: { bytes: number }) => {
      const line = tracker.lineAt(prevEnd);
      prevEnd = info.bytes;
      const items = skipped;
      skipped = [];
      if (record.length === 1 && record[0] === '' && columns !== 1) return items.length ? { items } : null;
      if (columns === -1) {
        columns = record.length;
        items.push({ kind: 'header', line, headers: record });
      } else if (record.length !== columns) {
        items.push({ kind: 'bad', line, values: record, reason: `expected ${columns} fields, found ${record.length}` });
      } else {
        items.push({ kind: 'row', line, values: record });
      }
      return { items };
    },
    on_skip: (err: Error & { code?: string }) => {
      const line = tracker.lineAt(prevEnd);
      // The last line is the one before a final line break, not the empty one after it.
      const endLine = tracker.lineAt(fed) - (lastByte === 0x0a || lastByte === 0x0d ? 1 : 0);
      prevEnd = fed;
      const reason =
        err.code === 'CSV_QUOTE_NOT_CLOSED'
          ? `unclosed quote: lines ${line}-${endLine} could not be read as records`
          : `${err.message} (lines ${line}-${endLine})`;
      skipped.push({ kind: 'bad', line, values: [], reason });
    },
  } as ParseOptions);

  const write = async (text: string) => {
    if (text === '') return;
    const buf = Buffer.from(text, 'utf8');
    tracker.push(buf);
    fed += buf.length;
    lastByte = buf[buf.length - 1]!;
    if (!parser.write(buf)) await new Promise<void>((resolve) => parser.once('drain', resolve));
  };
  let pumpError: unknown;
  const pump = (async () => {
    try {
      await write(head);
      while (!ended) {
        const next = await chunks.next();
        if (next.done) {
          await write(decoder.decode());
          break;
        }
        await write(decode(next.value));
      }
    } catch (err) {
      pumpError = err;
    }
    parser.end();
  })();

  try {
    for await (const out of parser as AsyncIterable<{ items: CsvItem[] }>) {
      for (const item of out.items) yield item;
    }
    for (const item of skipped) yield item;
    skipped = [];
    await pump;
    if (pumpError) throw pumpError;
  } finally {
    parser.destroy();
    // Stop reading the file when the consumer stops early (Ctrl-C, a fatal answer).
    if ('destroy' in input && typeof input.destroy === 'function') input.destroy();
    else void chunks.return?.();
  }
}
