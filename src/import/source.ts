// Streaming CSV reader: bytes → TextDecoder → record framing (csv-frame.ts) → csv-parse (stream API) →
// records with their STARTING line. csv-parse's info.lines is the line where a record ends and drifts in
// CRLF files (a line break inside a quoted field counts twice), so the start line comes from the framer, which also rejects an unclosed quote or
// an oversized record by its own lines and reads on from the next line. Lines end at CRLF, LF or CR in any
// mix (lines.ts); the framer ends every record in one LF, and csv-parse is told so instead of guessing.
import type { Readable } from 'node:stream';
import { TextDecoder } from 'node:util';
import type { Options as ParseOptions } from 'csv-parse';
import { UsageError } from '../errors.js';
import { RecordFramer } from './csv-frame.js';
import { firstLine } from './lines.js';
import type { CsvItem } from './types.js';
import { plural } from '../io/text.js';

/** How to read the input. */
interface ReadOptions {
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

function validDelimiter(delimiter: string | undefined): string | undefined {
  if (delimiter === undefined) return undefined;
  const named = new Map([
    ['tab', '\t'],
    ['\\t', '\t'],
    ['comma', ','],
    ['semicolon', ';'],
  ]);
  const value = named.get(delimiter) ?? delimiter;
  if (value.length !== 1 || value === '"' || value === '\n' || value === '\r') {
    throw new UsageError(`Invalid --delimiter '${delimiter}'.`, { hint: 'Use one character, e.g. , ; or tab.' });
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
  while (firstLine(head) === undefined && head.length < 65_536) {
    const next = await chunks.next();
    if (next.done) {
      head += decoder.decode();
      ended = true;
      break;
    }
    head += decode(next.value);
  }
  const delimiter = validDelimiter(opts.delimiter) ?? detectDelimiter(firstLine(head) ?? head);

  // Whole records only (csv-frame.ts): each parsed record takes its starting line from this queue, and
  // the lines the framer rejected are yielded just before the record that follows them.
  const framer = new RecordFramer(delimiter, MAX_RECORD_CHARS);
  const starts: { line: number; before: CsvItem[] }[] = [];
  // Shared by every record with nothing rejected before it (nearly all): no empty array per record.
  const NONE: CsvItem[] = [];
  let rejected: CsvItem[] = NONE;
  let parseErrors: CsvItem[] = NONE;
  let columns = -1;
  const parser = parse({
    delimiter,
    record_delimiter: '\n', // the framer's, for every record whatever its line break in the file (never guessed from the first line)
    relax_quotes: true, // a stray quote inside an unquoted field is data, and no line is silently lost
    relax_column_count: true, // checked below, so the row is reported instead of failing the stream
    skip_records_with_error: true,
    // What goes through the parser is one item, or a batch of them when bad ones come first (see below).
    on_record: (record: string[]): CsvItem | { items: CsvItem[] } | null => {
      const { line, before } = starts.shift() ?? { line: 0, before: NONE };
      let item: CsvItem | undefined;
      if (record.length === 1 && record[0] === '' && columns !== 1) item = undefined;
      else if (columns === -1) {
        columns = record.length;
        item = { kind: 'header', line, headers: record };
      } else if (record.length !== columns) {
        item = { kind: 'bad', line, values: record, reason: `expected ${plural(columns, 'field')}, found ${record.length}` };
      } else {
        item = { kind: 'row', line, values: record };
      }
      if (parseErrors.length === 0 && before.length === 0) return item ?? null;
      const items = [...parseErrors, ...before];
      parseErrors = NONE;
      if (item) items.push(item);
      return items.length ? { items } : null;
    },
    on_skip: (err: Error) => {
      const { line, before } = starts.shift() ?? { line: 0, before: NONE };
      parseErrors = [...parseErrors, ...before, { kind: 'bad', line, values: [], reason: `${err.message.replace(/ at line \d+/, '')} (line ${line})` }];
    },
  } as ParseOptions);

  const write = async (text: string, last = false) => {
    // The records of one chunk go to the parser in one write: one call per record would cost a quarter of the speed.
    let batch = '';
    for (const frame of last ? [...framer.push(text), ...framer.end()] : framer.push(text)) {
      if (frame.kind === 'bad') {
        rejected = [...rejected, { kind: 'bad', line: frame.line, values: [], reason: frame.reason }];
        continue;
      }
      starts.push({ line: frame.line, before: rejected });
      rejected = NONE;
      batch += frame.text;
    }
    if (batch !== '' && !parser.write(batch)) await new Promise<void>((resolve) => parser.once('drain', resolve));
  };
  let pumpError: unknown;
  const pump = (async () => {
    try {
      await write(head, ended);
      while (!ended) {
        const next = await chunks.next();
        if (next.done) {
          await write(decoder.decode(), true);
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
    for await (const out of parser as AsyncIterable<CsvItem | { items: CsvItem[] }>) {
      if ('kind' in out) yield out;
      else for (const item of out.items) yield item;
    }
    for (const item of [...parseErrors, ...rejected]) yield item;
    parseErrors = NONE;
    rejected = NONE;
    await pump;
    if (pumpError) throw pumpError;
  } finally {
    parser.destroy();
    // Stop reading the file when the consumer stops early (Ctrl-C, a fatal answer).
    if ('destroy' in input && typeof input.destroy === 'function') input.destroy();
    else void chunks.return?.();
  }
}
