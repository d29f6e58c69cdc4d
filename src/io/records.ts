import { emptyRecord, ownValue } from '../own-keys.js';
import { csvRow } from './csv.js';
import type { PagerContext } from './pager.js';
import type { IoContext } from './streams.js';
import { printTable } from './table.js';
import { jsonFor } from './terminal-json.js';
import { terminalText, tsvRow, valueText } from './text.js';
import { writeChunk } from './write.js';

/** Output formats of record listings (`card list --format`). */
export const FORMATS = ['table', 'json', 'ndjson', 'csv'] as const;
/** One of FORMATS. */
export type Format = (typeof FORMATS)[number];

/**
 * A sink for a stream of records. Streaming formats collect lines and write them in chunks of up to
 * 64 KB (a write per card would cost more than fetching the page); flush() writes what is collected (after
 * each page, so output keeps pace with the pages), end() flushes and finishes the document. Every
 * write waits for the stream to drain, so memory stays bounded.
 */
interface RecordWriter {
  write(record: Record<string, unknown>): Promise<void>;
  flush(): Promise<void>;
  /** Finish; `footer` is a line for the person after a terminal table (machine formats never print it). */
  end(footer?: string): Promise<void>;
}

const CHUNK = 64 * 1024;

/** Collects text for `out`, writing whenever CHUNK is reached and on flush(). */
function chunked(out: IoContext['stdout']) {
  let buf = '';
  const flush = async () => {
    if (buf === '') return;
    const text = buf;
    buf = '';
    await writeChunk(out, text);
  };
  const push = async (text: string) => {
    buf += text;
    if (buf.length >= CHUNK) await flush();
  };
  return { push, flush };
}

/** What a listing is written as. */
interface RecordWriterOptions {
  format: Format;
  /** Columns of table/csv output, in order; also the keys json/ndjson keep when `project` is set. */
  columns: string[];
  /** Keep only `columns` in json/ndjson records (a `--fields` list); otherwise records are written whole. */
  project?: boolean;
  /** json only: each record indented as JSON.stringify(value, null, 2) lays it out, for a person at a terminal. */
  indent?: boolean;
}

/** The default listing format: a table for a person at a terminal, NDJSON for a pipe. */
export function defaultFormat(ctx: Pick<IoContext, 'stdout'>): Format {
  return ctx.stdout.isTTY ? 'table' : 'ndjson';
}

/** The record's own keys among `columns`, in their order (own only: a field may be named `toString` or `__proto__`). */
export function pick(record: Record<string, unknown>, columns: string[]): Record<string, unknown> {
  const out = emptyRecord();
  for (const c of columns) if (Object.hasOwn(record, c)) out[c] = record[c];
  return out;
}

/**
 * A record writer for the format. Every format but a TTY table streams: json is written as `[`, one
 * record per line, `]`, so `card list --all` never holds the board. A table is piped as tab-separated
 * rows under a header line; on a TTY it is buffered, since column widths depend on every row.
 */
export function createRecordWriter(ctx: PagerContext, opts: RecordWriterOptions): RecordWriter {
  const { push, flush } = chunked(ctx.stdout);
  const out = ctx.stdout;
  const { columns } = opts;
  const shape = (r: Record<string, unknown>) => (opts.project ? pick(r, columns) : r);
  // On a terminal a person reads the machine formats too: JSON gets \uXXXX escapes and CSV cells the table's
  // visible escapes, so a server's ESC, BEL or U+202E never reaches the screen raw; piped, the bytes are exact.
  const json = (r: Record<string, unknown>) => jsonFor(out, JSON.stringify(shape(r)));
  const csv = out.isTTY ? (values: readonly unknown[]) => csvRow(values.map((v) => terminalText(valueText(v)))) : csvRow;
  // CSV and piped tables: a header line (written even when there are no records), then one row each.
  const headed = (row: (values: readonly unknown[]) => string): RecordWriter => {
    let started = false;
    const start = async () => {
      if (!started) await push(row(columns));
      started = true;
    };
    return {
      write: async (r) => {
        await start();
        await push(row(columns.map((c) => ownValue(r, c))));
      },
      flush,
      end: async () => {
        await start();
        await flush();
      },
    };
  };
  switch (opts.format) {
    case 'ndjson':
      return { write: (r) => push(`${json(r)}\n`), flush, end: flush };
    case 'json': {
      let count = 0;
      // Indented: the array's items one level in, as in JSON.stringify(records, null, 2). Every \n of its text
      // is a line break of the layout (a string's own is escaped); /^/gm would also match after a raw U+2028.
      const item = opts.indent ? (r: Record<string, unknown>) => jsonFor(out, `  ${JSON.stringify(shape(r), null, 2).replaceAll('\n', '\n  ')}`) : json;
      return {
        write: (r) => push(`${count++ === 0 ? '[\n' : ',\n'}${item(r)}`),
        flush,
        end: async () => {
          await push(count === 0 ? '[]\n' : '\n]\n');
          await flush();
        },
      };
    }
    case 'csv':
      return headed(csv);
    case 'table': {
      if (!out.isTTY) return headed(tsvRow);
      const rows: unknown[][] = [];
      return {
        write: async (r) => {
          rows.push(columns.map((c) => ownValue(r, c)));
        },
        // A table on a terminal is rendered whole at the end: its column widths depend on every row.
        // `_id` is never cut; columns that do not fit are left out, last first (src/io/table.ts).
        flush: async () => {},
        // No rows, no table: a header alone tells a person nothing (the caller says why there are none).
        end: async (footer) => {
          if (rows.length === 0) return;
          await printTable(ctx, columns, rows, { keep: ['_id'], footer, omittedHint: 'choose columns with --fields, or see every field with --format json or csv' });
        },
      };
    }
  }
}
