// The input's columns (CSV and TSV headers, JSON keys) → board fields, exactly (spec 2.2: names are case-sensitive; spec 4.3 rule 1: a key that
// does not match is dropped without an error, so every header must be accounted for before a row is sent).
import { UsageError } from '../errors.js';
import { emptyRecord, fieldRecord } from '../own-keys.js';
import { ansiCQuote, groupDigits, plural, terminalText } from '../io/text.js';
import { shorten } from '../io/width.js';
import { didYouMean, suggesterFor } from '../did-you-mean.js';
import { type ColumnMapping, type ColumnTarget, type ColumnWords, columnWords, REASON_COLUMN } from './types.js';

/** The mapping flags as plain data. */
interface MappingOptions {
  /** `--map "Header=Field"`, in order. */
  map: Record<string, string>;
  /** `--map-file` contents: header → field, or null to skip the column. */
  mapFile?: Record<string, string | null>;
  skipColumns: string[];
  /** `--id-column H`; else a column named `_id` supplies card ids. */
  idColumn?: string;
  /** Send headers that match no field under their own name (board with Create Fields on, spec 4.3 rule 2). */
  allowUnknown?: boolean;
}

/** A header that maps to nothing, with the closest field name when one is close. */
export interface Unmapped {
  header: string;
  index: number;
  suggestion?: string;
}

/** The result: a target for every mapped column, and the headers still to decide. */
interface MappingResult {
  columns: ColumnMapping[];
  unmapped: Unmapped[];
}

/** Parse one `--map "Header=Field"` value (split at the LAST `=`, so a header may contain `=`). */
export function parseMapFlag(value: string, into: Record<string, string> = emptyRecord<string>()): Record<string, string> {
  const eq = value.lastIndexOf('=');
  if (eq <= 0 || eq === value.length - 1) {
    throw new UsageError(`Invalid --map '${value}'.`, { hint: 'Use --map "Column=Field name" (a column, or a key of JSON input).' });
  }
  into[value.slice(0, eq)] = value.slice(eq + 1);
  return into;
}

/** Validate a parsed `--map-file`: an object of header → field name or null. */
export function parseMapFile(text: string, path: string): Record<string, string | null> {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`--map-file ${path} is not valid JSON (${(err as Error).message}).`);
  }
  const ok =
    typeof data === 'object' &&
    data !== null &&
    !Array.isArray(data) &&
    Object.values(data).every((v) => typeof v === 'string' || v === null);
  if (!ok) {
    throw new UsageError(`--map-file ${path} must be an object of "column or key": "Field name" (or null to skip).`);
  }
  // The "mapping" of an older `--dry-run --json` said "(dropped)" where map files say null: read it as null.
  const out = emptyRecord<string | null>();
  for (const [header, target] of Object.entries(data as Record<string, unknown>)) out[header] = target === DROPPED_TEXT ? null : (target as string | null);
  return out;
}

/** How a dropped column reads for people (the --dry-run report); JSON and map files say null. */
export const DROPPED_TEXT = '(dropped)';

/**
 * Quote a value for a POSIX shell command line, so the printed flags can be pasted as they are. A value
 * holding a character a terminal would act on (ESC, CR, a line break, U+202E) is `$'…'`-quoted instead:
 * one safe line that bash and zsh read back as the exact value.
 */
export function shellQuote(value: string): string {
  if (/^[\w@%+:,./=-]+$/.test(value)) return value;
  if (terminalText(value) !== value) return ansiCQuote(value);
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

function targetFor(name: string, fields: Set<string>, allowUnknown: boolean, flag: string): ColumnTarget {
  if (name === '_id') return { kind: 'id' };
  if (fields.has(name)) return { kind: 'field', field: name };
  if (allowUnknown) return { kind: 'new', field: name };
  const close = didYouMean(name, [...fields]);
  throw new UsageError(
    `${flag}: the board has no field '${terminalText(name)}'${close ? ` (did you mean '${terminalText(close)}'?)` : ''}. Field names are case-sensitive.`,
    { hint: `Fields: ${[...fields].map((f) => terminalText(f)).join(', ')}. Use --allow-unknown if the board has Create Fields on.` },
  );
}

/**
 * Decide each header's target. Precedence: --skip-column, --map, --map-file, the id column, the header's
 * own name (exact, case included), --allow-unknown. Throws UsageError for flags naming a missing column
 * or field, and for two columns sending the same field. `words` name the input's columns in messages.
 */
export function resolveMapping(headers: string[], fieldNames: string[], opts: MappingOptions, words: ColumnWords = columnWords('csv')): MappingResult {
  const fields = new Set(fieldNames);
  const present = new Set(headers);
  const named = (flag: string, header: string) => {
    if (!present.has(header)) {
      const list = headers.map((h) => terminalText(h)).join(', ');
      throw new UsageError(`${flag}: the ${words.input} has no ${words.short} '${terminalText(header)}'.`, { hint: `${words.short === 'key' ? 'Keys' : 'Columns'}: ${list}.` });
    }
  };
  for (const h of opts.skipColumns) named('--skip-column', h);
  for (const h of Object.keys(opts.map)) named(`--map "${h}=${opts.map[h]}"`, h);
  if (opts.idColumn !== undefined) named('--id-column', opts.idColumn);
  if (new Set(headers).size !== headers.length) {
    const dup = headers.find((h, i) => headers.indexOf(h) !== i);
    throw new UsageError(`The ${words.input} header names column '${terminalText(dup!)}' twice.`, { hint: 'Rename one of the columns in the file.' });
  }

  const columns: ColumnMapping[] = [];
  const unmapped: Unmapped[] = [];
  let suggest: ((name: string) => string | undefined) | undefined;
  headers.forEach((header, index) => {
    const add = (target: ColumnTarget, how: ColumnMapping['how']) => columns.push({ header, index, target, how });
    // Own keys only: a header named `constructor` or `__proto__` is data, not a key of Object.prototype.
    const fromFile = opts.mapFile && Object.hasOwn(opts.mapFile, header) ? opts.mapFile[header] : undefined;
    if (opts.skipColumns.includes(header)) add({ kind: 'skip' }, '--skip-column');
    else if (header === REASON_COLUMN) add({ kind: 'skip' }, 'rejects reason'); // a rejects file imported again
    else if (Object.hasOwn(opts.map, header)) add(targetFor(opts.map[header]!, fields, Boolean(opts.allowUnknown), '--map'), '--map');
    else if (fromFile === null) add({ kind: 'skip' }, 'map file');
    else if (fromFile !== undefined) add(targetFor(fromFile, fields, Boolean(opts.allowUnknown), '--map-file'), 'map file');
    else if (header === (opts.idColumn ?? '_id')) add({ kind: 'id' }, 'id column');
    else if (fields.has(header)) add({ kind: 'field', field: header }, 'own name');
    else if (opts.allowUnknown) add({ kind: 'new', field: header }, '--allow-unknown');
    else {
      suggest ??= suggesterFor(fieldNames);
      const suggestion = suggest(header);
      unmapped.push(suggestion === undefined ? { header, index } : { header, index, suggestion });
    }
  });
  checkTargets(columns);
  return { columns, unmapped };
}

/** Two columns writing the same key would make one silently overwrite the other: refuse. */
export function checkTargets(columns: ColumnMapping[]): void {
  const seen = new Map<string, string>();
  for (const column of columns) {
    const key = column.target.kind === 'id' ? '_id' : column.target.kind === 'skip' ? undefined : column.target.field;
    if (key === undefined) continue;
    const other = seen.get(key);
    if (other !== undefined) {
      throw new UsageError(`Columns '${other}' and '${column.header}' both map to '${key}'.`, {
        hint: `Skip one with --skip-column, or --map it to another field.`,
      });
    }
    seen.set(key, column.header);
  }
}

/** How many unmapped columns the refusal lists (and puts in its suggested command) unless --verbose. */
export const UNMAPPED_SHOWN = 10;

/**
 * The non-interactive refusal (exit 2, nothing sent): one line per unmapped header with the closest
 * field, and the user's own command with the flags to add (`commandWith` rebuilds it, options kept).
 * Past UNMAPPED_SHOWN columns (a file of thousands of unknown columns would fill screens) the first ones are
 * listed and counted, and the hint points at --map-file; `all` (--verbose) lists every one.
 */
export function unmappedError(unmapped: Unmapped[], commandWith: (flags: string[]) => string, all = false, words: ColumnWords = columnWords('csv')): UsageError {
  const count = unmapped.length;
  const shown = all || count <= UNMAPPED_SHOWN ? unmapped : unmapped.slice(0, UNMAPPED_SHOWN);
  // One line per column: a header or field holding a line break shows it as `\n` (terminalText), and
  // the flags to paste are `$'…'`-quoted (shellQuote), which the shell reads back as the exact name.
  const lines = shown.map((u) =>
    u.suggestion
      ? `  ${words.short} '${terminalText(u.header)}': no field of that name; closest is '${terminalText(u.suggestion)}': add --map ${shellQuote(`${u.header}=${u.suggestion}`)}`
      : `  ${words.short} '${terminalText(u.header)}': no field is close: add --map ${shellQuote(`${u.header}=<Field>`)} or --skip-column ${shellQuote(u.header)}`,
  );
  const more = count - shown.length;
  if (more > 0) lines.push(`  ... and ${groupDigits(more)} more (run with --verbose to list them all)`);
  const head = `${plural(count, words.long)} match${count === 1 ? 'es' : ''} no board field (names are case-sensitive); nothing was sent:`;
  if (count > UNMAPPED_SHOWN) {
    return new UsageError(`${head}\n${lines.join('\n')}`, {
      hint:
        `So many ${words.short}s are best mapped in a file: --map-file F.json with {"${words.long}": "Field name"} (null skips one); ` +
        'or --map / --skip-column for each, or --allow-unknown if the board has Create Fields on. Run on a terminal to map interactively and save the file.',
    });
  }
  const flags = shown.flatMap((u) => (u.suggestion ? ['--map', `${u.header}=${u.suggestion}`] : ['--skip-column', u.header]));
  return new UsageError(`${head}\n${lines.join('\n')}`, {
    hint: `${commandWith(flags)}   (or --map-file F.json; run on a terminal to map interactively)`,
  });
}

/** The mapping as a `--map-file` object: header → field, null for skipped columns. */
export function mappingToFile(columns: ColumnMapping[]): Record<string, string | null> {
  // Null prototype: a header named `__proto__` is saved as a key like any other.
  const out = emptyRecord<string | null>();
  for (const c of columns) {
    out[c.header] = c.target.kind === 'skip' ? null : c.target.kind === 'id' ? '_id' : c.target.field;
  }
  return out;
}

/** A cell that its column's --type cannot convert: the row is rejected with this message. */
export class CellError extends Error {}

const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/** A CSV cell as its --type says: strict, so nothing is guessed; JSON input is already typed. */
export function typedCell(column: ColumnMapping, value: unknown): unknown {
  if (column.type === undefined || column.type === 'string' || typeof value !== 'string') return value;
  const bad = (what: string) => new CellError(`column '${column.header}': ${JSON.stringify(shorten(value, 60))} is not ${what} (--type ${column.type})`);
  if (column.type === 'number') {
    const n = Number(value.trim());
    if (!NUMBER.test(value.trim()) || !Number.isFinite(n)) throw bad('a number');
    return n;
  }
  if (column.type === 'boolean') {
    if (value === 'true') return true;
    if (value === 'false') return false;
    throw bad('true or false');
  }
  try {
    return JSON.parse(value);
  } catch {
    throw bad('JSON');
  }
}

/**
 * Build the POST body of one row (spec 4.3): typed values (JSON input, or --type) and strings otherwise;
 * absent values and empty cells omitted unless `sendEmpty`. A fieldRecord: a field may be named `__proto__`
 * or `constructor`. Throws CellError for a cell its --type cannot convert.
 */
export function rowBody(columns: ColumnMapping[], values: readonly unknown[], sendEmpty: boolean): Record<string, unknown> {
  const body = fieldRecord();
  for (const column of columns) {
    if (column.target.kind === 'skip') continue;
    const value = values[column.index];
    // An empty id means "no id": a new card, whatever --empty says.
    if (column.target.kind === 'id') {
      if (value !== undefined && value !== null && value !== '') body._id = typeof value === 'string' ? value : JSON.stringify(value);
    } else if (value !== undefined && (value !== '' || sendEmpty)) {
      body[column.target.field] = value === '' ? value : typedCell(column, value);
    }
  }
  return body;
}
