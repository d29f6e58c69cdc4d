// Read-only SQL over a mirror (`cardboard query`). Three locks, each enough alone against a write:
//   1. the statement is refused before it runs unless SQLite says it returns rows (`stmt.reader`), and
//      unless it is exactly one statement (libsql would run the first and silently drop the rest);
//   2. the connection is `PRAGMA query_only`: SQLite refuses any write on it;
//   3. the file is opened read-only (`mode=ro` in a file: URI; libsql ignores the `readonly` option).
// A statement that returns rows and still writes (`INSERT … RETURNING`, `PRAGMA journal_mode = DELETE`)
// passes the first and is stopped by the other two.
import { pathToFileURL } from 'node:url';
import type Libsql from 'libsql';
import { CardboardError, UsageError } from '../errors.js';
import { checkMirror, notFilled, openDatabase, sqliteCode } from './sqlite-store.js';
import type { MirrorBoard, MirrorReader, QueryResult } from './types.js';

/**
 * The mirror's tables and views with their columns, in the mirror's own terms (what `--schema` prints): a
 * query like any other, so every --format applies. pragma_table_info is a read-only table-valued function. The
 * reader on PostgreSQL answers this text with its own listing (pg/reader-ops.ts).
 */
export const SCHEMA_SQL = `SELECT m.name AS "table", m.type AS kind, c.name AS "column", c.type AS type
FROM sqlite_schema AS m JOIN pragma_table_info(m.name) AS c
WHERE m.type IN ('table', 'view') AND m.name NOT LIKE 'sqlite\\_%' ESCAPE '\\'
ORDER BY m.type = 'view', m.name, c.cid`;

/** The characters that open a quoted string or name in SQLite, and the one that closes it. */
const QUOTES = new Map([["'", "'"], ['"', '"'], ['`', '`'], ['[', ']']]);

/**
 * The number of statements in `sql` (those with anything but blanks and comments). Hand-written because
 * libsql exposes neither sqlite3_complete nor the tail of a prepare, and no small, kept library tokenizes
 * SQLite's dialect: only `;` outside quotes ('…', "…", `…`, […]) and comments (-- to the end of the line,
 * /* to *\/) ends a statement. A trigger's body (BEGIN … ; … END) counts as several: it is a write anyway.
 */
export function countStatements(sql: string): number {
  let count = 0;
  let content = false;
  let i = 0;
  while (i < sql.length) {
    const c = sql[i]!;
    if (c === '-' && sql[i + 1] === '-') {
      const end = sql.indexOf('\n', i);
      i = end < 0 ? sql.length : end + 1;
    } else if (c === '/' && sql[i + 1] === '*') {
      const end = sql.indexOf('*/', i + 2);
      i = end < 0 ? sql.length : end + 2;
    } else if (c === ';') {
      if (content) count++;
      content = false;
      i++;
    } else if (/\s/.test(c)) {
      i++;
    } else {
      content = true;
      const close = QUOTES.get(c);
      if (close === undefined) {
        i++;
      } else {
        // A quote doubled inside its quotes ('it''s') is part of it: both halves are skipped as two strings.
        const end = sql.indexOf(close, i + 1);
        i = end < 0 ? sql.length : end + 1;
      }
    }
  }
  return content ? count + 1 : count;
}

/** The first word of a statement, upper case, for the refusal ("DELETE statements are refused"). */
function verbOf(sql: string): string {
  const stripped = sql.replace(/^(?:\s+|--[^\n]*(?:\n|$)|\/\*[\s\S]*?\*\/)*/, '');
  return /^[A-Za-z]+/.exec(stripped)?.[0].toUpperCase() ?? 'such';
}

/** A mirror opened read-only, answering one read statement at a time. */
export class SqliteReader implements MirrorReader {
  private constructor(
    private readonly db: Libsql.Database,
    readonly location: string,
  ) {}

  /** Open the mirror at `location` read-only; it must hold `board` (a mirror not filled yet is notFilled). */
  static open(location: string, board: MirrorBoard): SqliteReader {
    const db = openDatabase(`${pathToFileURL(location).href}?mode=ro`, location);
    try {
      if (checkMirror(db, board, location) === 0) throw notFilled(location);
      return new SqliteReader(db, location);
    } catch (err) {
      db.close();
      throw err;
    }
  }

  query(sql: string): QueryResult {
    const statements = countStatements(sql);
    if (statements === 0) throw new UsageError('query is empty: give one SQL statement, e.g. "SELECT count(*) FROM cards".');
    if (statements > 1) throw new UsageError(`query holds ${statements} statements: give one at a time; nothing was run.`);
    let stmt: Libsql.Statement;
    try {
      stmt = this.db.prepare(sql);
    } catch (err) {
      throw new UsageError(`query: ${firstLine(err)}`, { hint: 'The tables are cards, card_fields, fields, pulls and deliveries.', cause: err });
    }
    // The connection is made query_only here, after the prepare and before anything runs: SQLite applies a
    // flag PRAGMA (`PRAGMA query_only = 0`) as it prepares it.
    this.db.exec('PRAGMA query_only = 1');
    if (!stmt.reader) throw new UsageError(`query is read-only: ${verbOf(sql)} statements are refused; nothing was run.`);
    stmt.raw(true);
    // Integers as bigint: a number past 2^53 keeps every digit (the reader's user writes it as it can).
    stmt.safeIntegers(true);
    return { columns: stmt.columns().map((c) => c.name), rows: rowsOf(stmt) };
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}

/** The first line of an error's message. */
function firstLine(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0]!;
}

/** The rows of a prepared statement, streamed; an error of SQLite while they run is one for the user. */
function* rowsOf(stmt: Libsql.Statement): Iterable<unknown[]> {
  try {
    yield* stmt.iterate() as Iterable<unknown[]>;
  } catch (err) {
    if (sqliteCode(err) === undefined) throw err;
    throw new CardboardError(`query: ${firstLine(err)}`, { cause: err });
  }
}
