// A result's rows as records for the record writer (src/io/records.ts): keyed by column name, every value
// one that JSON can hold. SQLite hands over integers (a bigint when the connection reads them exactly),
// reals, text, NULL and blobs; the last two kinds have no JSON value of their own.
import { fieldRecord } from '../../own-keys.js';

/** Column names made distinct: a later `name` becomes `name_2` (or `_3`, ...: the first suffix that is free). */
export function distinctNames(columns: readonly string[]): { names: string[]; renamed: Array<[string, string]> } {
  const taken = new Set(columns);
  const used = new Set<string>();
  const renamed: Array<[string, string]> = [];
  const names = columns.map((name) => {
    if (!used.has(name)) {
      used.add(name);
      return name;
    }
    let n = 2;
    while (taken.has(`${name}_${n}`) || used.has(`${name}_${n}`)) n++;
    const unique = `${name}_${n}`;
    used.add(unique);
    renamed.push([name, unique]);
    return unique;
  });
  return { names, renamed };
}

/** The kinds of value that were written other than as SQLite holds them: said once, on stderr. */
export interface ValueNotes {
  /** Columns that held a blob, written as base64 text. */
  blobs: Set<string>;
  /** Columns that held an integer past 2^53 (JSON numbers lose its digits), written as its decimal text. */
  bigIntegers: Set<string>;
}

/** A SQLite value as JSON holds it: integers and reals as numbers, text, NULL as null, a blob as base64 text. */
export function jsonValue(value: unknown, column: string, notes: ValueNotes): unknown {
  if (value === null || value === undefined) return null;
  if (typeof value === 'bigint') {
    if (value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER)) return Number(value);
    notes.bigIntegers.add(column);
    return value.toString();
  }
  if (value instanceof Uint8Array) {
    notes.blobs.add(column);
    return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64');
  }
  if (value instanceof ArrayBuffer) {
    notes.blobs.add(column);
    return Buffer.from(value).toString('base64');
  }
  // A real past the double's range (9e999) is Infinity, which JSON would write as null.
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
  return value;
}

/** One row as a record of `names` (distinct, in the result's order). */
export function rowRecord(row: readonly unknown[], names: readonly string[], notes: ValueNotes): Record<string, unknown> {
  const record = fieldRecord();
  for (let i = 0; i < names.length; i++) record[names[i]!] = jsonValue(row[i], names[i]!, notes);
  return record;
}

/** What stderr says about the values: blobs and long integers written as text. */
export function valueNoteLines(notes: ValueNotes): string[] {
  const lines: string[] = [];
  if (notes.blobs.size > 0) lines.push(`blob values are written as base64 text (${[...notes.blobs].join(', ')})`);
  if (notes.bigIntegers.size > 0) lines.push(`integers beyond ±2^53 are written as decimal text, which keeps every digit (${[...notes.bigIntegers].join(', ')})`);
  return lines;
}
