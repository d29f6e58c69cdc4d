// The statement `cardboard query` runs over a mirror, and what it says when SQLite refuses it.
import { CardboardError, UsageError } from '../../errors.js';
import { SCHEMA_SQL } from '../../mirror/reader.js';
import { sqliteCode } from '../../mirror/sqlite-store.js';
import type { MirrorReader, QueryResult } from '../../mirror/types.js';

/**
 * Codes that mean the statement itself is wrong (SQLITE_ERROR: syntax, no such table or column, malformed
 * JSON; the others: a value out of range or of the wrong kind, a write on the read-only connection): exit 2.
 * Any other code is the file's trouble (busy, corrupt, unreadable): exit 1.
 */
const STATEMENT_CODES = new Set(['SQLITE_ERROR', 'SQLITE_RANGE', 'SQLITE_MISMATCH', 'SQLITE_TOOBIG', 'SQLITE_READONLY', 'SQLITE_AUTH', 'SQLITE_CONSTRAINT']);

/** The hint after a refused statement: the tables and views there are, and how to see their columns. */
function tablesHint(reader: MirrorReader): string {
  let tables = 'cards (_id, body), the view card_fields (a column per field), pulls, deliveries';
  try {
    const names = [...reader.query(SCHEMA_SQL).rows].map((row) => ({ name: String(row[0]), kind: String(row[1]) }));
    const of = (kind: string) => [...new Set(names.filter((n) => n.kind === kind).map((n) => n.name))];
    if (names.length > 0) tables = `${of('table').join(', ')}; views: ${of('view').join(', ')}`;
  } catch {
    // The list above is the mirror's schema as documented.
  }
  return `The mirror's tables: ${tables}. \`cardboard query --schema\` lists their columns.`;
}

/**
 * An error of `reader` turned into the one to report. The reader says what SQLite refused (its message, on
 * one line); one that is the statement's fault exits 2 with the mirror's tables as the hint, whether SQLite
 * refused it before it ran or while its rows were read. Refusals of the guard and the file's trouble (busy,
 * corrupt, unreadable: exit 1) go as they are.
 */
export function statementError(err: unknown, reader: MirrorReader): unknown {
  const sqlite = err instanceof CardboardError ? err.cause : err;
  const code = sqliteCode(sqlite);
  if (code === undefined || !STATEMENT_CODES.has(code)) return err;
  const message = err instanceof CardboardError ? err.message : `query: ${(sqlite as Error).message}`;
  return new UsageError(message.replace(/\s*[\r\n]+\s*/g, ' ').trim(), { hint: tablesHint(reader), cause: sqlite });
}

/** Run `sql` on `reader`, its rows streamed; errors while it starts or while its rows are read become statementError's. */
export function runStatement(reader: MirrorReader, sql: string): QueryResult {
  let result: QueryResult;
  try {
    result = reader.query(sql);
  } catch (err) {
    throw statementError(err, reader);
  }
  const rows = result.rows;
  return {
    columns: result.columns,
    rows: {
      *[Symbol.iterator]() {
        try {
          yield* rows;
        } catch (err) {
          throw statementError(err, reader);
        }
      },
    },
  };
}
