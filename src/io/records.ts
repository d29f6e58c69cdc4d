import type { Context } from '../context.js';
import { csvRow } from './csv.js';
import { renderTable } from './table.js';
import { tsvRow } from './text.js';
import { writeChunk } from './write.js';

/** Output formats of record listings (`card list --format`). */
export const FORMATS = ['table', 'json', 'ndjson', 'csv'] as const;
/** One of FORMATS. */
export type Format = (typeof FORMATS)[number];

/** A sink for a stream of records; write() waits for the stream to drain, end() finishes the document. */
export interface RecordWriter {
  write(record: Record<string, unknown>): Promise<void>;
  end(): Promise<void>;
}

/** What a listing is written as. */
export interface RecordWriterOptions {
  format: Format;
  /** Columns of table/csv output, in order; also the keys json/ndjson keep when `project` is set. */
  columns: string[];
  /** Keep only `columns` in json/ndjson records (a `--fields` list); otherwise records are written whole. */
  project?: boolean;
}

/** The default listing format: a table for a person at a terminal, NDJSON for a pipe. */
export function defaultFormat(ctx: Context): Format {
  return ctx.stdout.isTTY ? 'table' : 'ndjson';
}

function pick(record: Record<string, unknown>, columns: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const c of columns) if (c in record) out[c] = record[c];
  return out;
}

/**
 * A record writer for the format. Every format but a TTY table streams: json is written as `[`, one
 * record per line, `]`, so `card list --all` never holds the board. A table is piped as tab-separated
 * rows under a header line; on a TTY it is buffered, since column widths depend on every row.
 */
export function createRecordWriter(ctx: Context, opts: RecordWriterOptions): RecordWriter {
  const out = ctx.stdout;
  const { columns } = opts;
  const shape = (r: Record<string, unknown>) => (opts.project ? pick(r, columns) : r);
  switch (opts.format) {
    case 'ndjson':
      return { write: (r) => writeChunk(out, `${JSON.stringify(shape(r))}\n`), end: async () => {} };
    case 'json': {
      let count = 0;
      return {
        write: (r) => writeChunk(out, `${count++ === 0 ? '[\n' : ',\n'}${JSON.stringify(shape(r))}`),
        end: () => writeChunk(out, count === 0 ? '[]\n' : '\n]\n'),
      };
    }
    case 'csv': {
      let started = false;
      return {
        write: async (r) => {
          if (!started) await writeChunk(out, csvRow(columns));
          started = true;
          await writeChunk(out, csvRow(columns.map((c) => r[c])));
        },
        end: async () => {
          if (!started) await writeChunk(out, csvRow(columns));
        },
      };
    }
    case 'table': {
      if (!out.isTTY) {
        let started = false;
        return {
          write: async (r) => {
            if (!started) await writeChunk(out, tsvRow(columns));
            started = true;
            await writeChunk(out, tsvRow(columns.map((c) => r[c])));
          },
          end: async () => {
            if (!started) await writeChunk(out, tsvRow(columns));
          },
        };
      }
      const rows: unknown[][] = [];
      return {
        write: async (r) => {
          rows.push(columns.map((c) => r[c]));
        },
        end: async () => writeChunk(out, await renderTable(ctx, columns, rows)),
      };
    }
  }
}
