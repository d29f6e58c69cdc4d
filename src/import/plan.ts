// The plan of an import: what the command decided from its flags, checked, as plain data. Everything
// below the command (opening the input, the mapping, the journal, the engine, the reports) takes its
// part of this value and never sees a flag.
import type { FieldType, InputFormat } from './types.js';

/** Where the rows come from and how they are read. */
export interface PlanSource {
  /** A path, or `-` for stdin. */
  file: string;
  /** The format read: --input-format, else the file's extension (stdin: csv). */
  format: InputFormat;
  /** --input-format as given, if it was: the journal's plan digest and the repeated command keep it apart. */
  formatGiven?: InputFormat;
  /** CSV and TSV only: the field delimiter (default: detected). */
  delimiter?: string;
  /** CSV and TSV only: the file's encoding (default utf-8). */
  encoding?: string;
}

/** How columns become fields, before the header is read (resolveMapping applies it to the header). */
interface PlanMapping {
  /** `--map "Header=Field"`, header → field (a null-prototype record: a header is data, not a key of Object). */
  map: Record<string, string>;
  /** --map-file: the path of a JSON mapping, read when the input is opened. */
  mapFile?: string;
  skipColumns: string[];
  /** Send headers that match no field under their own name (Create Fields on, spec 4.3 rule 2). */
  allowUnknown: boolean;
}

/** How a row finds its card: an `_id` column, or a natural key read from the board. */
interface PlanKey {
  /** The column holding card ids (undefined: a column named `_id`). */
  idColumn?: string;
  /** --match-on: the field whose value finds the card to update. */
  matchOn?: string;
  /** --mirror: take the --match-on index from the board's mirror when it is no older than `maxAgeMs` (--max-age). */
  mirror?: { maxAgeMs: number };
}

/** What a run writes besides the board. */
export interface PlanOutputs {
  /** line,state,_id,message for every row (CSV). */
  results?: string;
  /** Rejected and uncertain rows, in the input's own columns plus a reason. */
  rejects?: string;
  /** Where the resume journal is kept (undefined: next to the input; none for stdin). */
  journal?: string;
  /** The summary (or the --dry-run report) as JSON on stdout; no progress line. */
  json: boolean;
}

/** How the run behaves. */
interface PlanPolicy {
  /** Requests in flight at once; 1 (the default) sends the rows in input order, one at a time. */
  concurrency: number;
  /** Stop when a row has met nothing but 429s for this long. */
  giveUpAfterMs: number;
  /** With --match-on, send rows whose values already equal the card's. */
  force: boolean;
  /** Forget every record of the journal (rows finished, and those that may be on the board): send every row again. */
  restart: boolean;
  /** Forget the rows earlier runs finished: send them again as new cards (rows that may be on the board are still settled). */
  again: boolean;
  /** --empty send: empty CSV cells are sent as "" (JSON input always sends them: sendsEmpty). */
  sendEmpty: boolean;
  /** Read, map and check every row; send nothing. */
  dryRun: boolean;
}

/** One `cardboard import`, decided and checked before anything is read or sent. */
export interface ImportPlan {
  source: PlanSource;
  mapping: PlanMapping;
  key: PlanKey;
  /** --type Field=T: a CSV cell sent as that field is converted first. */
  types: ReadonlyMap<string, FieldType>;
  outputs: PlanOutputs;
  policy: PlanPolicy;
}

/** Whether the input's values are typed JSON (NDJSON or a JSON array) rather than CSV text. */
export function isJsonInput(source: Pick<PlanSource, 'format'>): boolean {
  return source.format === 'ndjson' || source.format === 'json';
}

/** Whether empty values are sent: --empty send, or JSON input (where "" is a value, and an absent key is nothing). */
export function sendsEmpty(plan: Pick<ImportPlan, 'source' | 'policy'>): boolean {
  return plan.policy.sendEmpty || isJsonInput(plan.source);
}
