// `cardboard import`'s flags → its plan (src/import/plan.ts): every value parsed and every combination
// checked here, so a bad one stops the command (exit 2) before the file is opened or anything is sent.
import { parseDuration, parseInteger } from '../../units.js';
import { UsageError } from '../../errors.js';
import { emptyRecord } from '../../own-keys.js';
import { parseMapFlag } from '../../import/mapping.js';
import { type ImportPlan, isJsonInput, type PlanSource } from '../../import/plan.js';
import { FIELD_TYPES, type FieldType, INPUT_FORMATS, type InputFormat } from '../../import/types.js';

/**
 * The defaults of --concurrency and --give-up-after: the help shows them, and a repeated command omits them.
 * One request at a time keeps the file's order on the board (engine.ts); against the service's limit
 * (120 a minute) more in flight is no faster.
 */
export const DEFAULT_CONCURRENCY = 1;
export const DEFAULT_GIVE_UP_AFTER = '15m';

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

/** The input's format: --input-format, else the extension (.ndjson/.jsonl, .json, .tsv; anything else is CSV). */
function inputFormatOf(file: string, given: InputFormat | undefined): InputFormat {
  if (given) return given;
  const ext = /\.([^./\\]+)$/.exec(file)?.[1]?.toLowerCase();
  if (ext === 'ndjson' || ext === 'jsonl') return 'ndjson';
  if (ext === 'json') return 'json';
  return ext === 'tsv' ? 'tsv' : 'csv';
}

/** Flags that mean nothing for JSON input are refused rather than ignored. */
function checkFormatFlags(source: PlanSource, types: ReadonlyMap<string, FieldType>): void {
  if (!isJsonInput(source)) return;
  const { file, format, delimiter, encoding } = source;
  const flag = types.size > 0 ? '--type' : delimiter !== undefined ? '--delimiter' : encoding !== undefined && !/^utf-?8$/i.test(encoding) ? '--encoding' : undefined;
  if (flag) throw new UsageError(`${flag} applies to CSV input; ${file} is read as ${format}.`, { hint: flag === '--type' ? 'JSON values keep their own types.' : 'JSON input is UTF-8.' });
  if (format === 'json' && file === '-') throw new UsageError('A JSON array is read from a file, not stdin.', { hint: 'Pipe one object per line with --input-format ndjson.' });
}

/** Commander's flags (values as commander gives them) → the import's plan; bad values are UsageErrors (exit 2, nothing sent). */
export function planFromFlags(file: string, f: Record<string, unknown>): ImportPlan {
  const concurrency = parseInteger(String(f.concurrency), '--concurrency', 1, 64);
  if (f.empty !== 'omit' && f.empty !== 'send') {
    throw new UsageError(`Invalid --empty '${f.empty}'.`, { hint: 'Use --empty omit or --empty send.' });
  }
  if (f.restart && f.journal === undefined && file === '-') {
    throw new UsageError('--restart has no journal to ignore when reading stdin without --journal.');
  }
  if (f.again && f.journal === undefined && file === '-') {
    throw new UsageError('--again has no journal to forget when reading stdin without --journal: every row is sent anyway.');
  }
  if (f.again && f.restart) {
    throw new UsageError('--again and --restart cannot be used together.', { hint: '--restart forgets everything the journal holds; --again only the rows earlier runs finished.' });
  }
  const map = emptyRecord<string>();
  for (const m of f.map as string[]) parseMapFlag(m, map);
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
  const formatGiven = parseInputFormat(f.inputFormat);
  const source: PlanSource = { file, format: inputFormatOf(file, formatGiven), formatGiven, delimiter: str(f.delimiter), encoding: str(f.encoding) };
  const types = parseTypes((f.type as string[] | undefined) ?? []);
  checkFormatFlags(source, types);
  return {
    source,
    mapping: { map, mapFile: str(f.mapFile), skipColumns: f.skipColumn as string[], allowUnknown: Boolean(f.allowUnknown) },
    key: { idColumn: str(f.idColumn), matchOn: str(f.matchOn) },
    types,
    outputs: { results: str(f.results), rejects: str(f.rejects), journal: str(f.journal), json: Boolean(f.json) },
    policy: {
      concurrency,
      giveUpAfterMs: parseDuration(String(f.giveUpAfter ?? DEFAULT_GIVE_UP_AFTER), '--give-up-after'),
      force: Boolean(f.force),
      restart: Boolean(f.restart),
      again: Boolean(f.again),
      sendEmpty: f.empty === 'send',
      dryRun: Boolean(f.dryRun),
    },
  };
}
