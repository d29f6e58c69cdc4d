import { parseDuration, parseInteger } from '../../units.js';
import { UsageError } from '../../errors.js';
import { emptyRecord } from '../../own-keys.js';
import { parseMapFlag } from '../../import/mapping.js';
import type { FieldType, InputFormat } from '../../import/types.js';

/** `cardboard import` as plain data. */
export interface ImportOptions {
  /** A path, or `-` for stdin. */
  file: string;
  map: Record<string, string>;
  mapFile?: string;
  skipColumns: string[];
  matchOn?: string;
  idColumn?: string;
  dryRun: boolean;
  concurrency: number;
  /** Stop the run when a row has been answered 429 for this long without a break. */
  giveUpAfterMs: number;
  journal?: string;
  restart: boolean;
  results?: string;
  rejects?: string;
  delimiter?: string;
  encoding?: string;
  sendEmpty: boolean;
  allowUnknown: boolean;
  json: boolean;
  /** --input-format; undefined: from the file's extension (stdin: csv). */
  inputFormat?: InputFormat;
  /** --type Field=T (repeatable): typed values from CSV cells. */
  types: Map<string, FieldType>;
  /** --force: send every row, even those --match-on finds unchanged. */
  force: boolean;
}

const INPUT_FORMATS: readonly InputFormat[] = ['csv', 'tsv', 'ndjson', 'json'];
/** The types of `--type Field=T` (also offered by shell completion). */
export const FIELD_TYPES: readonly FieldType[] = ['string', 'number', 'boolean', 'json'];

function parseInputFormat(value: unknown): InputFormat | undefined {
  if (value === undefined) return undefined;
  const v = String(value).toLowerCase() === 'jsonl' ? 'ndjson' : String(value).toLowerCase();
  if (!(INPUT_FORMATS as readonly string[]).includes(v)) {
    throw new UsageError(`Invalid --input-format '${String(value)}'.`, { hint: 'Use csv, tsv, ndjson (or jsonl) or json.' });
  }
  return v as InputFormat;
}

/** `--type "Field=number"`, split at the LAST `=` like --map. */
function parseTypes(values: string[]): Map<string, FieldType> {
  const types = new Map<string, FieldType>();
  for (const value of values) {
    const eq = value.lastIndexOf('=');
    const type = value.slice(eq + 1);
    if (eq <= 0 || !(FIELD_TYPES as readonly string[]).includes(type)) {
      throw new UsageError(`Invalid --type '${value}'.`, { hint: 'Use --type "Field=number" (number, boolean, json or string).' });
    }
    types.set(value.slice(0, eq), type as FieldType);
  }
  return types;
}

/** Commander flags → ImportOptions; bad values are UsageErrors (exit 2, nothing sent). */
export function toOptions(file: string, f: Record<string, unknown>): ImportOptions {
  const concurrency = parseInteger(String(f.concurrency), '--concurrency', 1, 64);
  if (f.empty !== 'omit' && f.empty !== 'send') {
    throw new UsageError(`Invalid --empty '${f.empty}'.`, { hint: 'Use --empty omit or --empty send.' });
  }
  if (f.restart && f.journal === undefined && file === '-') {
    throw new UsageError('--restart has no journal to ignore when reading stdin without --journal.');
  }
  const map = emptyRecord<string>();
  for (const m of f.map as string[]) parseMapFlag(m, map);
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
  return {
    file,
    map,
    mapFile: str(f.mapFile),
    skipColumns: f.skipColumn as string[],
    matchOn: str(f.matchOn),
    idColumn: str(f.idColumn),
    dryRun: Boolean(f.dryRun),
    concurrency,
    giveUpAfterMs: parseDuration(String(f.giveUpAfter ?? '15m'), '--give-up-after'),
    journal: str(f.journal),
    restart: Boolean(f.restart),
    results: str(f.results),
    rejects: str(f.rejects),
    delimiter: str(f.delimiter),
    encoding: str(f.encoding),
    sendEmpty: f.empty === 'send',
    allowUnknown: Boolean(f.allowUnknown),
    json: Boolean(f.json),
    inputFormat: parseInputFormat(f.inputFormat),
    types: parseTypes((f.type as string[] | undefined) ?? []),
    force: Boolean(f.force),
  };
}
