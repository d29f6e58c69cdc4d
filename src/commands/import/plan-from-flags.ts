// `cardboard import`'s flags → its plan (src/import/plan.ts): every value parsed and every combination
// checked here, so a bad one stops the command (exit 2) before the file is opened or anything is sent.
import { parseDuration, parseInteger } from '../../units.js';
import { UsageError } from '../../errors.js';
import { DEFAULT_MAX_AGE_MS } from '../../mirror/fresh.js';
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
  const format = String(value).toLowerCase() === 'jsonl' ? 'ndjson' : String(value).toLowerCase();
  if (!(INPUT_FORMATS as readonly string[]).includes(format)) {
    throw new UsageError(`Invalid --input-format '${String(value)}'.`, { hint: 'Use csv, tsv, ndjson (or jsonl) or json.' });
  }
  return format as InputFormat;
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

/** --mirror [--max-age D]: the index of --match-on from the board's mirror, so both need --match-on. */
function parseMirror(flags: Record<string, unknown>): { maxAgeMs: number } | undefined {
  if (flags.maxAge !== undefined && !flags.mirror) throw new UsageError('--max-age applies to --mirror.', { hint: 'Add --mirror (with --match-on FIELD), or drop --max-age.' });
  if (!flags.mirror) return undefined;
  if (flags.matchOn === undefined) {
    throw new UsageError('--mirror needs --match-on FIELD: it takes the --match-on index from the board\'s mirror instead of its pages.', { hint: 'Add --match-on with the field that identifies a card (e.g. --match-on Name), or drop --mirror.' });
  }
  return { maxAgeMs: flags.maxAge === undefined ? DEFAULT_MAX_AGE_MS : parseDuration(String(flags.maxAge), '--max-age') };
}

/** Commander's flags (values as commander gives them) → the import's plan; bad values are UsageErrors (exit 2, nothing sent). */
export function planFromFlags(file: string, flags: Record<string, unknown>): ImportPlan {
  const concurrency = parseInteger(String(flags.concurrency), '--concurrency', 1, 64);
  if (flags.empty !== 'omit' && flags.empty !== 'send') {
    throw new UsageError(`Invalid --empty '${flags.empty}'.`, { hint: 'Use --empty omit or --empty send.' });
  }
  if (flags.restart && flags.journal === undefined && file === '-') {
    throw new UsageError('--restart has no journal to ignore when reading stdin without --journal.');
  }
  if (flags.again && flags.journal === undefined && file === '-') {
    throw new UsageError('--again has no journal to forget when reading stdin without --journal: every row is sent anyway.');
  }
  if (flags.again && flags.restart) {
    throw new UsageError('--again and --restart cannot be used together.', { hint: '--restart forgets everything the journal holds; --again only the rows earlier runs finished.' });
  }
  const map = emptyRecord<string>();
  for (const m of flags.map as string[]) parseMapFlag(m, map);
  const stringOrUndefined = (v: unknown) => (typeof v === 'string' ? v : undefined);
  const formatGiven = parseInputFormat(flags.inputFormat);
  const source: PlanSource = { file, format: inputFormatOf(file, formatGiven), formatGiven, delimiter: stringOrUndefined(flags.delimiter), encoding: stringOrUndefined(flags.encoding) };
  const types = parseTypes((flags.type as string[] | undefined) ?? []);
  checkFormatFlags(source, types);
  return {
    source,
    mapping: { map, mapFile: stringOrUndefined(flags.mapFile), skipColumns: flags.skipColumn as string[], allowUnknown: Boolean(flags.allowUnknown) },
    key: { idColumn: stringOrUndefined(flags.idColumn), matchOn: stringOrUndefined(flags.matchOn), mirror: parseMirror(flags) },
    types,
    outputs: { results: stringOrUndefined(flags.results), rejects: stringOrUndefined(flags.rejects), journal: stringOrUndefined(flags.journal), json: Boolean(flags.json) },
    policy: {
      concurrency,
      giveUpAfterMs: parseDuration(String(flags.giveUpAfter ?? DEFAULT_GIVE_UP_AFTER), '--give-up-after'),
      force: Boolean(flags.force),
      restart: Boolean(flags.restart),
      again: Boolean(flags.again),
      sendEmpty: flags.empty === 'send',
      dryRun: Boolean(flags.dryRun),
    },
  };
}
