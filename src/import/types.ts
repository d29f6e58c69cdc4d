// Types shared by the import engine and the command that renders it. The engine never prints.

/** One item read from the CSV, in file order. `line` is the line where the record STARTS (1-based). */
export type CsvItem =
  | { kind: 'header'; line: number; headers: string[] }
  | { kind: 'row'; line: number; values: unknown[] }
  | { kind: 'bad'; line: number; values: unknown[]; reason: string };

/** The one state every row ends in. */
export type RowState = 'created' | 'updated' | 'found' | 'unchanged' | 'skipped' | 'rejected' | 'uncertain';

/** Every state, in the order summaries list them. */
export const ROW_STATES: readonly RowState[] = ['created', 'updated', 'found', 'unchanged', 'skipped', 'rejected', 'uncertain'];

/** How one row ended. `values` are the row's own CSV fields, for the rejects file. */
export interface RowOutcome {
  line: number;
  state: RowState;
  id?: string;
  message?: string;
  /** A read of the board decided this row's outcome (its earlier try may have been applied). */
  settled?: boolean;
  values: unknown[];
}

/** Where one CSV column goes. `new`: an unknown key sent anyway (board has Create Fields on, spec 4.3 rule 2). */
export type ColumnTarget =
  | { kind: 'field'; field: string }
  | { kind: 'new'; field: string }
  | { kind: 'id' }
  | { kind: 'skip' };

/** One CSV column, its target and what decided it (shown by --dry-run and the interactive preview). */
export interface ColumnMapping {
  header: string;
  index: number;
  target: ColumnTarget;
  how: 'own name' | '--map' | 'map file' | '--skip-column' | 'id column' | 'prompt' | '--allow-unknown' | 'rejects reason';
  /** --type of the field this column sends: a CSV cell is converted before it is sent. */
  type?: FieldType;
}

/** What the engine reports while it runs; the command turns these into progress, files and a summary. */
export type ImportEvent =
  /** The engine starts (clock time): what the rate and the summary's durationMs count from. */
  | { type: 'start'; at: number }
  | { type: 'row'; outcome: RowOutcome }
  | { type: 'retry'; line: number; reason: string; attempt: number }
  | { type: 'stop'; reason: string };

/** Counts and timing of a finished (or interrupted) run. */
export interface ImportSummary {
  rows: number;
  created: number;
  updated: number;
  /**
   * Rows whose card was already on the board when this run settled them: stored by an earlier run's try
   * (in flight at a kill, or uncertain), so this run neither created nor updated it.
   */
  found: number;
  /** --match-on rows whose values already equal the card's: not sent. */
  unchanged: number;
  skipped: number;
  rejected: number;
  uncertain: number;
  /** Rows whose outcome a read of the board decided: a try that may have been applied, never re-sent blindly. */
  settled: number;
  durationMs: number;
  retries: number;
  waits: number;
  /** Why the run stopped before the end of the file, if it did. */
  stopped?: 'interrupted' | 'mode' | 'fatal';
  stopMessage?: string;
}

/** The column a rejects file adds to the input's own: recognised on import and never sent. */
export const REASON_COLUMN = '_cardboard_reason';

/** The input formats `import` reads: chosen by extension or --input-format. */
export type InputFormat = 'csv' | 'tsv' | 'ndjson' | 'json';

/** Every input format, as --input-format names them. */
export const INPUT_FORMATS: readonly InputFormat[] = ['csv', 'tsv', 'ndjson', 'json'];

/** How messages name one column of the input, by its format: a JSON input has keys, not columns. */
export interface ColumnWords {
  /** The format: `CSV`, `TSV`, `NDJSON`, `JSON`. */
  input: string;
  /** Alone: `column`, or `key` for JSON input. */
  short: 'column' | 'key';
  /** With the format: `CSV column`, `TSV column`, `NDJSON key`, `JSON key`. */
  long: string;
}

/** The words for the input's columns (`CSV column`, `NDJSON key`). */
export function columnWords(format: InputFormat): ColumnWords {
  const input = format.toUpperCase();
  const short = format === 'ndjson' || format === 'json' ? 'key' : 'column';
  return { input, short, long: `${input} ${short}` };
}

/** What `--type Field=T` makes of a CSV cell before it is sent. */
export type FieldType = 'string' | 'number' | 'boolean' | 'json';

/** The types of `--type Field=T` (also offered by shell completion). */
export const FIELD_TYPES: readonly FieldType[] = ['string', 'number', 'boolean', 'json'];
