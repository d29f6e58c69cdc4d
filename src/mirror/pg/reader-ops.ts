// `cardboard query` on a mirror in PostgreSQL: one read-only statement over one board's mirror, its rows in
// batches. Three locks, each enough alone against a write, as on SQLite (reader.ts):
//   1. the statement is refused before anything reaches the server unless it is one statement that reads
//      (sql-guard.ts), which also stops what a read-only transaction allows (advisory locks, set_config…);
//   2. the session's default_transaction_read_only is on;
//   3. the statement runs in `BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY`, its rows read from a cursor
//      of the server (DECLARE, FETCH) in batches: one snapshot, however long the reading, which never waits
//      for the writer (a listener, a pull) nor makes it wait: it takes no lock a write waits for (no advisory
//      lock, no row lock; its tables' ACCESS SHARE lock stops only DROP and ALTER).
// The SQL means what it means on SQLite: the session's own (TEMP) views `cards`, `card_fields`, `fields`,
// `pulls` and `deliveries` show the selected board's rows of the shared tables, without their `board` column,
// and pg_temp is put first on the search path, so `SELECT count(*) FROM cards` counts this board's cards.
import pg from 'pg';
import { CardboardError, UsageError } from '../../errors.js';
import { SCHEMA_SQL } from '../reader.js';
import { notFilled } from '../sqlite-store.js';
import type { MirrorBoard } from '../types.js';
import { quoteIdentifier } from '../view.js';
import { PG_FORMAT } from './migrations.js';
import { fieldColumns } from './ops.js';
import type { PgReaderOps } from './protocol.js';
import { guardStatement } from './sql-guard.js';

/** The tables shown to the statement through a view of the same name, and the columns they keep to themselves. */
const SCOPED_TABLES = ['cards', 'fields', 'pulls', 'deliveries'];
const HIDDEN_COLUMNS = new Set(['board', 'body_text']);

/** The server's cursor of the statement. */
const CURSOR = 'cardboard_query';

/** The hint after a statement the server refused. */
const TABLES_HINT = 'The tables are cards, card_fields, fields, pulls and deliveries; `cardboard query --schema` lists their columns.';

/**
 * What --schema prints on PostgreSQL: the session's views with their columns and types, in SQLite's terms
 * (the four that show a table of the board are listed as tables, card_fields as a view), in SQLite's order.
 */
const PG_SCHEMA_SQL = `SELECT c.relname::text AS "table", CASE WHEN c.relname = 'card_fields' THEN 'view' ELSE 'table' END AS kind,
  a.attname::text AS "column", format_type(a.atttypid, a.atttypmod) AS type
FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid
WHERE c.relnamespace = pg_my_temp_schema() AND c.relkind = 'v' AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY c.relname = 'card_fields', c.relname, a.attnum`;

/**
 * SQLSTATE classes of errors that are the statement's fault (syntax, no such table or column, a value out
 * of range, a write refused by the read-only transaction, an unsupported feature, a subquery of many rows,
 * a function's own error): exit 2. Any other (the connection, the server's resources, a cancel) is exit 1.
 */
const STATEMENT_CLASSES = new Set(['0A', '21', '22', '25', '2F', '38', '39', '42', 'P0']);

/** The first line of an error's message. */
function firstLine(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0]!;
}

/** An error of the server while a statement starts or its rows are read, in the user's terms. */
function failure(err: unknown): unknown {
  if (err instanceof CardboardError) return err;
  const code = (err as { code?: unknown } | null)?.code;
  // A table the role may not read is no fault of the statement: the thread says which right is missing.
  if (code === '42501') return err;
  if (typeof code === 'string' && STATEMENT_CLASSES.has(code.slice(0, 2))) return new UsageError(`query: ${firstLine(err)}`, { hint: TABLES_HINT, cause: err });
  return new CardboardError(`query: ${firstLine(err)}`, { cause: err });
}

/**
 * A decimal's digits and exponent, without leading or trailing zeros (`1.50` and `15e-1` both `15e-1`), for
 * comparing two spellings of one number.
 */
function canonicalDecimal(text: string): string {
  const m = /^([+-]?)(\d*)(?:\.(\d*))?(?:e([+-]?\d+))?$/i.exec(text);
  if (m === null) return text;
  let digits = `${m[2]}${m[3] ?? ''}`.replace(/^0+/, '');
  let exponent = Number(m[4] ?? 0) - (m[3] ?? '').length;
  while (digits.endsWith('0')) {
    digits = digits.slice(0, -1);
    exponent++;
  }
  return digits === '' ? '0' : `${m[1] === '-' ? '-' : ''}${digits}e${exponent}`;
}

/** A numeric as a number when the number's shortest spelling has the same digits (nothing lost), else its text. */
export function numericValue(text: string): number | string {
  const n = Number(text);
  if (!Number.isFinite(n) || canonicalDecimal(String(n)) !== canonicalDecimal(text)) return text;
  // A numeric has no negative zero.
  return n === 0 ? 0 : n;
}

const identity = (text: string) => text;
const parseBytea = pg.types.getTypeParser(17, 'text');
const parseBool = pg.types.getTypeParser(16, 'text');

/**
 * The value of a column as the user gets it: int8 as bigint (every digit), the other integers and floats as
 * numbers, numeric as a number when exact (numericValue), booleans, bytea as a Buffer (written as base64),
 * and everything else as the server's text: json and jsonb as their JSON text, times and dates as written,
 * arrays, intervals, uuids…
 */
const VALUE_TYPES = {
  getTypeParser(oid: number): (text: string) => unknown {
    switch (oid) {
      case 16:
        return parseBool;
      case 17:
        return parseBytea;
      case 20:
        return (text) => BigInt(text);
      case 21:
      case 23:
      case 26:
      case 700:
      case 701:
        return Number;
      case 1700:
        return numericValue;
      default:
        return identity;
    }
  },
} as unknown as pg.CustomTypesConfig;

/**
 * The schema of the mirror's tables and the number of `board` there; notFilled when they or the board are not
 * there. Only reads (not openBoard, which makes or migrates the tables under the writers' lock): a reader
 * never takes the writers' lock, and a role that may only read opens the mirror.
 */
async function boardOf(client: pg.Client, board: MirrorBoard, location: string): Promise<{ schema: string; number: number }> {
  const found = await client.query<{ schema: string | null; made: boolean }>(
    `SELECT current_schema() AS schema, to_regclass(quote_ident(current_schema()) || '.cardboard_mirror') IS NOT NULL
       AND to_regclass(quote_ident(current_schema()) || '.boards') IS NOT NULL AS made`,
  );
  const { schema, made } = found.rows[0]!;
  if (schema === null || !made) throw notFilled(location);
  const format = await client.query<{ value: string }>("SELECT value FROM cardboard_mirror WHERE key = 'format'");
  const number = Number(format.rows[0]?.value ?? 0);
  if (number > PG_FORMAT) {
    throw new CardboardError(`The mirror ${location} is in format ${number}, newer than this cardboard reads (${PG_FORMAT}); nothing was run.`, {
      hint: 'Upgrade cardboard.',
    });
  }
  const row = await client.query<{ board: number }>('SELECT board FROM boards WHERE server = $1 AND board_id = $2', [board.server, board.id]);
  if (row.rows[0] === undefined) throw notFilled(location);
  return { schema, number: row.rows[0].board };
}

/**
 * The statements that make the session's views of board `number` of the tables in `schema`: each table's
 * columns but `board` and `body_text`, and card_fields from the board's fields as saved, as the store makes
 * the board's own card_fields_<n> (fieldColumns). Not a view over card_fields_<n> itself: a view of the
 * session would hold that one, and the writer could not replace it when the board's schema changes.
 */
async function viewsOf(client: pg.Client, schema: string, number: number): Promise<string> {
  const columns = await client.query<{ table: string; columns: string[] }>(
    `SELECT c.relname::text AS table, array_agg(a.attname::text ORDER BY a.attnum) AS columns
     FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid
     WHERE c.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = $1) AND c.relname = ANY($2::text[])
       AND a.attnum > 0 AND NOT a.attisdropped
     GROUP BY c.relname`,
    [schema, SCOPED_TABLES],
  );
  // The names as the service gave them: `name` holds a NUL as U+FFFD.
  const fields = await client.query<{ text: string }>(`SELECT body_text AS text FROM ${quoteIdentifier(schema)}.fields WHERE board = $1 ORDER BY pos`, [number]);
  const views = columns.rows.map(({ table, columns: names }) => {
    const shown = names.filter((name) => !HIDDEN_COLUMNS.has(name)).map(quoteIdentifier);
    return `CREATE OR REPLACE TEMP VIEW ${table} AS SELECT ${shown.join(', ')} FROM ${quoteIdentifier(schema)}.${table} WHERE board = ${number}`;
  });
  const names = fields.rows.map((f) => (JSON.parse(f.text) as { name: string }).name);
  views.push(`CREATE OR REPLACE TEMP VIEW card_fields AS SELECT ${['_id', ...fieldColumns(names)].join(', ')} FROM ${quoteIdentifier(schema)}.cards WHERE board = ${number}`);
  return views.join('; ');
}

/**
 * Open `cardboard query` on the mirror of `board` in the database `connect` reaches (`location`, shown): a
 * connection of its own, its session made read-only once its views are made. notFilled when the database
 * holds no mirror of the board.
 */
export async function openPgReader(connect: () => Promise<pg.Client>, board: MirrorBoard, location: string): Promise<PgReaderOps> {
  const client = await connect();
  // A connection lost while idle says so here; the next query on it fails with the reason.
  client.on('error', () => undefined);
  try {
    // The guard reads strings as the server does with this on (a backslash is itself in '…').
    await client.query('SET standard_conforming_strings = on');
    const { schema, number } = await boardOf(client, board, location);
    await client.query(await viewsOf(client, schema, number));
    // pg_temp first, whatever the URL's search_path says: a name the views take is theirs.
    await client.query("SELECT set_config('search_path', 'pg_temp, ' || current_setting('search_path'), false)");
    await client.query('SET default_transaction_read_only = on');
  } catch (err) {
    await client.end().catch(() => undefined);
    if (err instanceof CardboardError || typeof (err as { code?: unknown } | null)?.code !== 'string') throw err;
    // The server's refusal (a role without TEMP on the database cannot make the views; one without USAGE on the schema…).
    throw new CardboardError(`Cannot query the mirror ${location}: ${firstLine(err)}.`, {
      hint: 'The role needs to read the mirror\'s tables and to make temporary views (TEMP on the database).',
      cause: err,
    });
  }
  let open = false;

  const end = async (how: 'COMMIT' | 'ROLLBACK') => {
    open = false;
    await client.query(how);
  };
  const failed = async (err: unknown) => {
    if (open || !(err instanceof UsageError)) await end('ROLLBACK').catch(() => undefined);
    return failure(err);
  };

  return {
    async queryOpen(sql) {
      if (open) await end('ROLLBACK');
      const statement = sql === SCHEMA_SQL ? PG_SCHEMA_SQL : guardStatement(sql);
      try {
        await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
        open = true;
        // The extended protocol: the server takes one statement only, should the guard ever see one where it sees two.
        await client.query({ text: `DECLARE ${CURSOR} NO SCROLL CURSOR FOR ${statement}`, queryMode: 'extended' } as pg.QueryConfig);
        const first = await client.query({ text: `FETCH FORWARD 0 FROM ${CURSOR}`, rowMode: 'array', types: VALUE_TYPES });
        return first.fields.map((f) => f.name);
      } catch (err) {
        throw await failed(err);
      }
    },
    async queryNext(max) {
      if (!open) return [];
      try {
        const batch = await client.query<unknown[]>({ text: `FETCH FORWARD ${Math.max(1, Math.floor(max))} FROM ${CURSOR}`, rowMode: 'array', types: VALUE_TYPES });
        if (batch.rows.length < max) await end('COMMIT');
        return batch.rows;
      } catch (err) {
        throw await failed(err);
      }
    },
    async queryClose() {
      if (open) await end('ROLLBACK');
    },
    async close() {
      open = false;
      await client.end();
    },
  };
}
