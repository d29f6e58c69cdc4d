// The tables of the mirror on a PostgreSQL server, made on first use and migrated by version, and the write
// transaction every change runs in. One schema (the first of the connection's search_path that exists, which
// the URL's `options=-csearch_path=…` chooses) holds the mirror of every board, each row naming its board:
//   cardboard_mirror  the format of the tables ('format');
//   boards            one row per board mirrored: its number in the other tables, the server and board it is,
//                     the last delivery or own write applied (`seq`), and the count of fields once a schema
//                     was saved;
//   cards, fields, pulls, deliveries, tombstones, listener
//                     the SQLite mirror's tables (sqlite-store.ts) with a `board` column first; a card's
//                     `body` is jsonb, for SQL, and `body_text` the JSON cardboard wrote and reads back;
//   card_fields_<board>  a view per board: `_id` and one column per field (saveSchema in ops.ts).
// Writers of one board wait for each other on an advisory lock of the transaction (boardKey: the schema and
// the number of the board); making or migrating the tables takes the lock of board 0, which no board has
// (`boards.board` is from 1).
import { createHash } from 'node:crypto';
import type pg from 'pg';
import { CardboardError, UsageError } from '../../errors.js';
import type { MirrorBoard } from '../types.js';
import { BUSY_TIMEOUT_MS, notFilled } from '../sqlite-store.js';

/** The format of the tables this code writes; an older one is migrated on open, a newer one refused. */
export const PG_FORMAT = 1;

/** The first key of every write lock the mirror takes ("cbmr"): the second is boardKey's. */
const LOCK_SPACE = 0x63626d72;

/**
 * The second key of an advisory lock of board `b` in `schema`: 31 bits of a digest of both (a positive int4).
 * Advisory locks are the database's, and each schema numbers its boards from 1: a key of the number alone
 * would make the writers of every schema's board 1 wait for each other (and one long writer make the others
 * "busy"). Two boards whose digests meet only wait for each other.
 */
export function boardKey(schema: string, b: number): number {
  return createHash('sha256').update(`${schema}\n${b}`).digest().readUInt32BE(0) >>> 1;
}

/** The tables (and views) of a mirror: any of them in a schema without `cardboard_mirror` is another program's. */
const MIRROR_TABLES = ['cardboard_mirror', 'boards', 'cards', 'fields', 'pulls', 'deliveries', 'tombstones', 'listener'];

/** The SQL that brings the tables from format i to i + 1 (MIGRATIONS[0] makes them, format 1). */
const MIGRATIONS: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS cardboard_mirror (key text PRIMARY KEY, value text);
   CREATE TABLE IF NOT EXISTS boards (
     board serial PRIMARY KEY,
     server text NOT NULL,          -- the server's identity, whatever its spelling
     board_id text NOT NULL,
     base_url text NOT NULL,        -- the service's base URL as first configured (shown)
     seq bigint NOT NULL DEFAULT 0, -- the last delivery or own write applied
     schema_fields integer,         -- the count of fields of the schema saved; NULL before the first save
     UNIQUE (server, board_id)
   );
   CREATE TABLE IF NOT EXISTS cards (
     board integer NOT NULL REFERENCES boards ON DELETE CASCADE,
     _id text COLLATE "C" NOT NULL, -- compared byte by byte, as SQLite does: board order breaks ties by it
     body jsonb NOT NULL,           -- the card, for SQL (a NUL in a string, which jsonb cannot hold, as U+FFFD)
     body_text text NOT NULL,       -- the card's JSON exactly as kept (its keys in their order): what cardboard reads
     pos double precision NOT NULL, -- board order: the order the last pull read the cards in
     pulled integer,                -- the last pull that saw the card (pulls.id)
     missed integer NOT NULL DEFAULT 0,       -- complete pulls in a row that did not see it
     delivered_seq bigint NOT NULL DEFAULT 0, -- the last delivery or own write that changed it
     updated_at text,               -- when this body was learned: a delivery's receipt, a write's time, a pull's start
     PRIMARY KEY (board, _id)
   );
   CREATE INDEX IF NOT EXISTS cards_pos ON cards (board, pos, _id);
   CREATE TABLE IF NOT EXISTS fields (
     board integer NOT NULL REFERENCES boards ON DELETE CASCADE,
     pos integer NOT NULL, name text NOT NULL,
     body jsonb NOT NULL, body_text text NOT NULL, -- the field's JSON, as for cards
     PRIMARY KEY (board, pos)
   );
   CREATE TABLE IF NOT EXISTS pulls (
     board integer NOT NULL REFERENCES boards ON DELETE CASCADE,
     id integer NOT NULL, started_at text NOT NULL, start_seq bigint NOT NULL,
     next_page integer NOT NULL DEFAULT 0, pages integer NOT NULL DEFAULT 0, cards integer NOT NULL DEFAULT 0,
     finished_at text, deleted integer,
     PRIMARY KEY (board, id)
   );
   CREATE TABLE IF NOT EXISTS deliveries (
     board integer NOT NULL REFERENCES boards ON DELETE CASCADE,
     seq bigint NOT NULL, received_at text NOT NULL,
     kind text NOT NULL,            -- card, deleted, comment or unplaced
     name text, card_id text,
     body text,                     -- an unplaced delivery's text, at most 64 KiB (a NUL as U+FFFD)
     body_cut boolean NOT NULL DEFAULT false, -- true when body holds only the first 64 KiB
     PRIMARY KEY (board, seq)
   );
   CREATE TABLE IF NOT EXISTS tombstones (
     board integer NOT NULL REFERENCES boards ON DELETE CASCADE,
     _id text COLLATE "C" NOT NULL, seq bigint NOT NULL,
     PRIMARY KEY (board, _id)
   );
   CREATE TABLE IF NOT EXISTS listener (
     board integer NOT NULL REFERENCES boards ON DELETE CASCADE,
     since text NOT NULL, beat_at text NOT NULL,
     PRIMARY KEY (board, since)
   );`,
];

/** The error of a write that waited for another writer longer than lock_timeout (SQLite's busy error). */
function busy(location: string, err: unknown): CardboardError {
  return new CardboardError(`The mirror ${location} stayed busy for ${BUSY_TIMEOUT_MS / 1000}s: another process is writing to it.`, {
    hint: 'Run again when the other pull or import is done.',
    cause: err,
  });
}

/** The SQLSTATE of a server's error, if `err` is one. */
function sqlState(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** The session settings of the connection that writes (see openPgStore). */
export const WRITER_SETTINGS = `SET synchronous_commit = off; SET lock_timeout = ${BUSY_TIMEOUT_MS}; SET standard_conforming_strings = on`;

/**
 * Run `fn` in one transaction of `client` that first takes the advisory lock `key` (boardKey of the board, or
 * of 0: the tables themselves), rolled back if it throws. READ COMMITTED: every statement after the lock sees what the writer
 * before it committed. A wait for the lock longer than lock_timeout fails as SQLite's busy timeout does.
 */
export async function inWrite<T>(client: pg.Client, location: string, key: number, fn: () => Promise<T>): Promise<T> {
  try {
    await client.query(`BEGIN; SELECT pg_advisory_xact_lock(${LOCK_SPACE}, ${key})`);
    const out = await fn();
    await client.query('COMMIT');
    return out;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw sqlState(err) === '55P03' ? busy(location, err) : err;
  }
}

/**
 * A write transaction of two round trips, for the writes that come many a second (a listener's deliveries, a
 * pull's pages): BEGIN, the board's lock (`key`, as inWrite's) and `read` in one, then the statements `fn` makes of what `read`
 * returned and COMMIT in another. Each statement of one round trip is planned on its own, after the one
 * before it ran: `read` sees every commit made before the lock was taken. The statements carry their values
 * as SQL text (sqlValue in text.ts: standard_conforming_strings is on in the writer's session).
 */
export async function writeBatch<T>(client: pg.Client, location: string, key: number, read: string, fn: (rows: unknown[][]) => { out: T; write: string }): Promise<T> {
  try {
    const results = (await client.query({ text: `BEGIN; SELECT pg_advisory_xact_lock(${LOCK_SPACE}, ${key}); ${read}`, rowMode: 'array' })) as unknown as pg.QueryArrayResult[];
    const { out, write } = fn(results[2]!.rows);
    await client.query(`${write}; COMMIT`);
    return out;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw sqlState(err) === '55P03' ? busy(location, err) : err;
  }
}

/** What the schema holds: its name, and the mirror's format there (0: none yet). */
interface Found {
  schema: string;
  format: number;
}

/**
 * Look at the schema the connection writes in, refusing (nothing changed) a missing schema, tables of the
 * mirror's names that are another program's, or a newer format.
 */
async function inspect(client: pg.Client, location: string, create: boolean): Promise<Found> {
  const { rows } = await client.query<{ schema: string | null; path: string; names: string[] }>(
    `SELECT current_schema() AS schema, current_setting('search_path') AS path,
            array(SELECT c.relname::text FROM pg_class c WHERE c.relnamespace = to_regnamespace(current_schema())
                  AND c.relname = ANY($1::text[]) AND c.relkind IN ('r', 'p', 'v', 'm', 'f') ORDER BY 1) AS names`,
    [MIRROR_TABLES],
  );
  const { schema, path, names } = rows[0]!;
  if (schema === null) {
    if (!create) throw notFilled(location);
    throw new UsageError(`No schema of the search path (${path}) exists in ${location}, so no mirror can be made there; nothing was changed.`, {
      hint: 'Create the schema (CREATE SCHEMA …), or name one that exists with `options=-csearch_path=<schema>` in CARDBOARD_MIRROR.',
    });
  }
  if (!names.includes('cardboard_mirror')) {
    if (names.length > 0) {
      throw new UsageError(`The schema ${JSON.stringify(schema)} of ${location} holds tables named as a mirror's (${names.join(', ')}) that are not one; nothing was changed.`, {
        hint: 'Put the mirror in a schema of its own: add `options=-csearch_path=<schema>` to CARDBOARD_MIRROR (CREATE SCHEMA it first), or use another database.',
      });
    }
    return { schema, format: 0 };
  }
  const format = await client.query<{ value: string }>("SELECT value FROM cardboard_mirror WHERE key = 'format'");
  const found = Number(format.rows[0]?.value ?? 0);
  if (found > PG_FORMAT) {
    throw new CardboardError(`The mirror ${location} is in format ${found}, newer than this cardboard reads (${PG_FORMAT}); nothing was changed.`, {
      hint: 'Upgrade cardboard, or point CARDBOARD_MIRROR at another database or schema.',
    });
  }
  return { schema, format: found };
}

/** The number of `board` in the tables, if they hold it. */
async function boardNumber(client: pg.Client, board: MirrorBoard): Promise<number | undefined> {
  const { rows } = await client.query<{ board: number }>('SELECT board FROM boards WHERE server = $1 AND board_id = $2', [board.server, board.id]);
  return rows[0]?.board;
}

/** A board in the mirror's tables: its number there, and the key of its locks (boardKey). */
export interface OpenedBoard {
  number: number;
  key: number;
}

/**
 * `board` in the mirror's tables, made (tables, board row, its view) when `create`, migrated when older;
 * notFilled when they do not hold it and `create` is false. Nothing is written when the tables are current
 * and hold the board: a role that may only read opens them.
 */
export async function openBoard(client: pg.Client, board: MirrorBoard, location: string, create: boolean): Promise<OpenedBoard> {
  const found = await inspect(client, location, create);
  const opened = (number: number): OpenedBoard => ({ number, key: boardKey(found.schema, number) });
  if (found.format === PG_FORMAT) {
    const number = await boardNumber(client, board);
    if (number !== undefined) return opened(number);
  }
  if (found.format === 0 && !create) throw notFilled(location);
  await inWrite(client, location, boardKey(found.schema, 0), async () => {
    // Another process may have made or migrated them since.
    const now = await inspect(client, location, create);
    for (let format = now.format; format < PG_FORMAT; format++) await client.query(MIGRATIONS[format]!);
    if (now.format < PG_FORMAT) {
      await client.query("INSERT INTO cardboard_mirror (key, value) VALUES ('format', $1) ON CONFLICT (key) DO UPDATE SET value = excluded.value", [String(PG_FORMAT)]);
    }
    if (!create) return;
    const made = await client.query<{ board: number }>(
      'INSERT INTO boards (server, board_id, base_url) VALUES ($1, $2, $3) ON CONFLICT (server, board_id) DO NOTHING RETURNING board',
      [board.server, board.id, board.baseUrl],
    );
    const number = made.rows[0]?.board;
    if (number !== undefined) await client.query(`CREATE OR REPLACE VIEW ${fieldsViewName(number)} AS SELECT _id FROM cards WHERE board = ${number}`);
  });
  const number = await boardNumber(client, board);
  if (number === undefined) throw notFilled(location);
  return opened(number);
}

/** The name of the per-field view of board `number`. */
export function fieldsViewName(number: number): string {
  return `card_fields_${number}`;
}
