// `cardboard query` on a mirror in PostgreSQL (src/mirror/pg/reader-ops.ts), against a real server: each of its
// locks against a write is checked alone (the guard refuses before the client sends anything; past the
// guard, the read-only transaction refuses), the views scope the SQL to the board, a long reading never holds
// a writer up, and values keep every digit.
import fc from 'fast-check';
import pg from 'pg';
import { describe, expect, it, onTestFinished } from 'vitest';
import { CardboardError, ExitCode, UsageError } from '../../src/errors.js';
import { openPgStore } from '../../src/mirror/pg/ops.js';
import { numericValue, openPgReader } from '../../src/mirror/pg/reader-ops.js';
import type { PgReaderOps } from '../../src/mirror/pg/protocol.js';
import { SCHEMA_SQL } from '../../src/mirror/reader.js';
import type { MirrorBoard, MirrorDelivery } from '../../src/mirror/types.js';
import type { Card } from '../../src/spec-types.js';
import { PG_REQUIRED, PG_SKIPPED, PG_SOCKET, type PgSchema, pgSchema } from '../helpers/postgres.js';

const BOARD: MirrorBoard = { baseUrl: 'http://localhost:1', server: 'http://localhost:1', id: 'b1' };
const OTHER: MirrorBoard = { baseUrl: 'http://localhost:1', server: 'http://localhost:1', id: 'b2' };

const T0 = '2030-01-01T10:00:00.000Z';

/** Fill the mirror of `board` in `db` through the store: its schema (`fields`), one complete pull of `cards`, then `deliveries`. */
async function fill(db: PgSchema, board: MirrorBoard, cards: Card[], fields: string[] = ['Status'], deliveries: MirrorDelivery[] = []): Promise<void> {
  const store = await openPgStore(counting(db).connect, board, 'x', true);
  try {
    await store.saveSchema(fields.map((name, i) => ({ name, uuid: `u${i}` })));
    const pull = await store.beginPull(T0);
    await store.savePage(pull, 0, cards);
    await store.finishPull(pull, [], T0);
    if (deliveries.length > 0) await store.applyDeliveries(deliveries);
  } finally {
    await store.close();
  }
}

/** A way to connect to `db` that records every query the reader's client sends. */
function counting(db: PgSchema): { connect: () => Promise<pg.Client>; sent: string[] } {
  const sent: string[] = [];
  const connect = async () => {
    const client = new pg.Client({ host: PG_SOCKET, user: 'postgres', database: 'postgres', options: `-csearch_path=${db.schema}` });
    await client.connect();
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    client.query = ((...args: unknown[]) => {
      const first = args[0];
      sent.push(typeof first === 'string' ? first : String((first as { text?: string }).text));
      return query(...args);
    }) as typeof client.query;
    return client;
  };
  return { connect, sent };
}

/** A reader of `board` in `db`, closed at the test's end, and the queries its client sent. */
async function readerOf(db: PgSchema, board: MirrorBoard = BOARD): Promise<{ reader: PgReaderOps; sent: string[] }> {
  const { connect, sent } = counting(db);
  const reader = await openPgReader(connect, board, 'postgres://server/db');
  onTestFinished(() => reader.close());
  return { reader, sent };
}

/** Every row of `sql` on `reader`. */
async function all(reader: PgReaderOps, sql: string): Promise<{ columns: string[]; rows: unknown[][] }> {
  const columns = await reader.queryOpen(sql);
  const rows: unknown[][] = [];
  for (;;) {
    const batch = await reader.queryNext(2);
    rows.push(...batch);
    if (batch.length < 2) return { columns, rows };
  }
}

/** The error `promise` rejects with. */
async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (err) {
    return err as Error;
  }
  throw new Error('nothing was refused');
}

const TWO = [{ _id: 'a', Status: 'Open' }, { _id: 'b', Status: 'Done' }];

describe('numericValue', () => {
  it('gives a number when its JSON spelling has the digits of the numeric, else the numeric\'s text', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (d) => {
        expect(numericValue(String(d))).toBe(Object.is(d, -0) ? 0 : d);
        // Two decimals: below 2^46 doubles are 2^-7 apart or closer, so the double nearest a two-decimal text
        // spells it back (no other such text is as near); from there on they are 2^-6 apart or more, and the
        // text may have digits the double does not (-659632253287001.63 reads back as …001.6).
        const text = d.toFixed(2);
        const value = numericValue(text);
        if (Math.abs(d) < 2 ** 46) expect(value).toBe(Number(text) + 0);
        else expect(value === text || value === Number(text)).toBe(true);
      }),
    );
    expect(numericValue('1.500')).toBe(1.5);
    expect(numericValue('-0.000')).toBe(0);
    expect(numericValue('9007199254740993')).toBe('9007199254740993');
    expect(numericValue('-659632253287001.63')).toBe('-659632253287001.63');
    expect(numericValue('0.1000000000000000000001')).toBe('0.1000000000000000000001');
    expect(numericValue('Infinity')).toBe('Infinity');
  });
});

describe.skipIf(PG_SKIPPED !== undefined && !PG_REQUIRED)('query on a mirror in PostgreSQL', () => {
  it('has a server (CARDBOARD_REQUIRE_POSTGRES=1)', () => {
    expect(PG_SKIPPED).toBeUndefined();
  });

  it('answers one read statement over the board: its columns, then its rows in batches', async () => {
    const db = await pgSchema();
    await fill(db, BOARD, TWO);
    const { reader } = await readerOf(db);
    expect(await reader.queryOpen("SELECT _id, body->>'Status' AS s FROM cards ORDER BY _id;")).toEqual(['_id', 's']);
    expect(await reader.queryNext(1)).toEqual([['a', 'Open']]);
    expect(await reader.queryNext(5)).toEqual([['b', 'Done']]);
    expect(await reader.queryNext(5)).toEqual([]);
    // A statement after another, and one ended early.
    expect((await all(reader, 'SELECT count(*) FROM cards')).rows).toEqual([[2n]]);
    await reader.queryOpen('SELECT _id FROM cards');
    await reader.queryClose();
    expect((await all(reader, 'VALUES (1)')).rows).toEqual([[1]]);
  });

  const refused: Array<[string, RegExp]> = [
    ['DELETE FROM cards', /^query is read-only: DELETE statements are refused; nothing was run\.$/],
    ['WITH x AS (DELETE FROM cards RETURNING 1) SELECT * FROM x', /DELETE is refused, even inside a WITH; nothing was run/],
    ['SELECT * INTO t FROM cards', /INTO is refused/],
    ['SELECT pg_advisory_lock(1)', /pg_advisory_lock\(\) is refused \(it acts on the server\)/],
    ['SELECT "pg_advisory_lock"(1)', /pg_advisory_lock\(\) is refused/],
    ["SELECT set_config('default_transaction_read_only', 'off', false)", /set_config\(\) is refused/],
    ['SELECT * FROM cards FOR UPDATE', /FOR UPDATE is refused \(it locks rows\)/],
    ['SELECT * FROM cards FOR NO KEY UPDATE', /FOR NO KEY UPDATE is refused/],
    ['SELECT * FROM cards FOR KEY SHARE', /FOR KEY SHARE is refused/],
    ['SELECT 1; DELETE FROM cards', /^query holds 2 statements: give one at a time; nothing was run\.$/],
    ["SELECT $$x$$; DELETE FROM cards WHERE _id = 'a'", /holds 2 statements/],
    ['COPY cards TO STDOUT', /COPY statements are refused/],
    ['TRUNCATE cards', /TRUNCATE statements are refused/],
    ["SELECT nextval('s')", /nextval\(\) is refused/],
    ["SELECT * FROM query_to_xml('DELETE FROM cards RETURNING 1', true, false, '')", /query_to_xml\(\) is refused/],
    ['SELECT 1 -- a comment ends at a carriage return\rDELETE FROM cards', /DELETE is refused/],
    ["SELECT 'a\\'; DELETE FROM cards; --'", /holds 2 statements/],
    ['SELECT 1 /* unclosed', /unclosed comment/],
    ['-- nothing', /^query is empty/],
    ['SELECT 1 /*\0*/', /NUL character/],
  ];
  it.each(refused)('refuses %j before the client sends anything, and changes nothing', async (sql, message) => {
    const db = await pgSchema();
    await fill(db, BOARD, TWO);
    const { reader, sent } = await readerOf(db);
    const before = sent.length;
    const err = await rejection(reader.queryOpen(sql));
    expect(err).toBeInstanceOf(UsageError);
    expect((err as UsageError).exitCode).toBe(ExitCode.usage);
    expect(err.message).toMatch(message);
    expect(sent.slice(before)).toEqual([]);
    expect(await db.rows('SELECT count(*) FROM cards')).toEqual([[2]]);
    // The reader still answers.
    expect((await all(reader, 'SELECT count(*) FROM cards')).rows).toEqual([[2n]]);
  });

  it('past the guard, the server refuses a write (a function the guard cannot know) in its read-only transaction', async () => {
    const db = await pgSchema();
    await fill(db, BOARD, TWO);
    await db.rows(`CREATE FUNCTION ${db.schema}.wipe() RETURNS bigint LANGUAGE sql AS 'DELETE FROM ${db.schema}.cards RETURNING 1'`);
    const { reader, sent } = await readerOf(db);
    const before = sent.length;
    const err = await rejection(all(reader, 'SELECT wipe()'));
    expect(sent.length).toBeGreaterThan(before);
    expect(err).toBeInstanceOf(UsageError);
    expect(err.message).toMatch(/^query: cannot execute DELETE in a read-only transaction/);
    expect(await db.rows('SELECT count(*) FROM cards')).toEqual([[2]]);
    // A write in a transaction of the session's own making is refused too: the session is read-only.
    const { connect } = counting(db);
    const client = await connect();
    onTestFinished(() => client.end());
    const own = await openPgReader(async () => client, BOARD, 'x');
    await expect(client.query('DELETE FROM cards')).rejects.toThrow(/read-only transaction/);
    expect(await db.rows('SELECT count(*) FROM cards')).toEqual([[2]]);
    // And with the session's default undone, the statement's own transaction is read-only.
    await client.query('SET default_transaction_read_only = off');
    expect((await rejection(all(own, 'SELECT wipe()'))).message).toMatch(/^query: cannot execute DELETE in a read-only transaction/);
    expect(await db.rows('SELECT count(*) FROM cards')).toEqual([[2]]);
  });

  it('runs statements that name write words in strings, quoted names, comments and dollar quotes', async () => {
    const db = await pgSchema();
    await fill(db, BOARD, TWO);
    const { reader } = await readerOf(db);
    expect((await all(reader, "SELECT 'DELETE' AS x")).rows).toEqual([['DELETE']]);
    expect((await all(reader, `SELECT 1 AS "update", E'it\\'s; DROP TABLE cards' AS "delete"`)).rows).toEqual([[1, "it's; DROP TABLE cards"]]);
    expect((await all(reader, 'SELECT /* DELETE /* nested */ INTO */ count(*) FROM cards -- DROP')).rows).toEqual([[2n]]);
    expect((await all(reader, 'SELECT $t$ DELETE FROM cards; $$ $t$ AS s')).rows).toEqual([[' DELETE FROM cards; $$ ']]);
    expect((await all(reader, "(SELECT _id FROM cards WHERE body->>'Status' = 'Open') UNION ALL (SELECT _id FROM (TABLE cards) AS t LIMIT 0) ORDER BY 1")).rows).toEqual([['a']]);
  });

  it('scopes cards, card_fields, fields, pulls and deliveries to the board (two boards in one schema)', async () => {
    const db = await pgSchema();
    await fill(db, BOARD, TWO, ['Status', 'Due date'], [{ kind: 'comment', receivedAt: T0, cardId: 'a' }]);
    const comment = { kind: 'comment', receivedAt: T0, cardId: 'z' } as const;
    await fill(db, OTHER, [{ _id: 'z', Status: 'Open' }], ['Owner'], [comment, comment, comment]);
    const { reader } = await readerOf(db);
    expect((await all(reader, 'SELECT _id FROM cards ORDER BY 1')).rows).toEqual([['a'], ['b']]);
    expect(await all(reader, 'SELECT * FROM card_fields ORDER BY 1')).toEqual({ columns: ['_id', 'Status', 'Due date'], rows: [['a', 'Open', null], ['b', 'Done', null]] });
    expect((await all(reader, 'SELECT name FROM fields ORDER BY pos')).rows).toEqual([['Status'], ['Due date']]);
    expect((await all(reader, 'SELECT count(*) FROM deliveries')).rows).toEqual([[1n]]);
    expect((await all(reader, 'SELECT count(*) FROM pulls')).rows).toEqual([[1n]]);
    expect((await reader.queryOpen('SELECT * FROM cards'))).toEqual(['_id', 'body', 'pos', 'pulled', 'missed', 'delivered_seq', 'updated_at']);
    await reader.queryClose();
    const other = (await readerOf(db, OTHER)).reader;
    expect((await all(other, 'SELECT * FROM card_fields')).rows).toEqual([['z', null]]);
    expect((await all(other, 'SELECT count(*) FROM deliveries')).rows).toEqual([[3n]]);
    // The whole schema's tables are there too, for a query that names them.
    expect((await all(other, 'SELECT count(*) FROM boards')).rows).toEqual([[2n]]);
  });

  it('lists the views and their columns for --schema', async () => {
    const db = await pgSchema();
    await fill(db, BOARD, TWO);
    const { reader } = await readerOf(db);
    const { columns, rows } = await all(reader, SCHEMA_SQL);
    expect(columns).toEqual(['table', 'kind', 'column', 'type']);
    expect(rows.filter((r) => r[0] === 'cards')).toEqual(
      [['_id', 'text'], ['body', 'jsonb'], ['pos', 'double precision'], ['pulled', 'integer'], ['missed', 'integer'], ['delivered_seq', 'bigint'], ['updated_at', 'text']].map(([c, t]) => ['cards', 'table', c, t]),
    );
    expect([...new Set(rows.map((r) => `${r[0]} ${r[1]}`))]).toEqual(['cards table', 'deliveries table', 'fields table', 'pulls table', 'card_fields view']);
  });

  it('is notFilled without the tables or without the board', async () => {
    const db = await pgSchema();
    const { connect } = counting(db);
    const empty = await rejection(openPgReader(connect, BOARD, 'postgres://server/db'));
    expect(empty).toBeInstanceOf(CardboardError);
    expect(empty.message).toBe('No mirror of this board at postgres://server/db.');
    await fill(db, OTHER, []);
    expect((await rejection(openPgReader(connect, BOARD, 'postgres://server/db'))).message).toBe('No mirror of this board at postgres://server/db.');
  });

  it('serves a role that may only read; a role that may not read the tables is told so', async () => {
    const db = await pgSchema();
    await fill(db, BOARD, TWO);
    const role = `r_${db.schema}`;
    const blind = `b_${db.schema}`;
    await db.rows(`CREATE ROLE ${role} LOGIN; GRANT USAGE ON SCHEMA ${db.schema} TO ${role}; GRANT SELECT ON ALL TABLES IN SCHEMA ${db.schema} TO ${role};
      CREATE ROLE ${blind} LOGIN; GRANT USAGE ON SCHEMA ${db.schema} TO ${blind}`);
    onTestFinished(() => db.rows(`DROP OWNED BY ${role}, ${blind}; DROP ROLE ${role}, ${blind}`).then(() => undefined));
    const as = (user: string) => async () => {
      const client = new pg.Client({ host: PG_SOCKET, user, database: 'postgres', options: `-csearch_path=${db.schema}` });
      await client.connect();
      return client;
    };
    const reader = await openPgReader(as(role), BOARD, 'postgres://server/db');
    onTestFinished(() => reader.close());
    expect((await all(reader, 'SELECT _id, "Status" FROM card_fields ORDER BY 1')).rows).toEqual([['a', 'Open'], ['b', 'Done']]);
    const err = await rejection(openPgReader(as(blind), BOARD, 'postgres://server/db'));
    expect(err).toBeInstanceOf(CardboardError);
    expect(err.message).toBe('Cannot query the mirror postgres://server/db: permission denied for table cardboard_mirror.');
  });

  it('never holds a writer up: a write transaction with the advisory lock commits while the cursor is open, unseen by it', async () => {
    const db = await pgSchema();
    await fill(db, BOARD, [...Array(10).keys()].map((i) => ({ _id: `c${i}`, Status: 'Open' })));
    const { reader } = await readerOf(db);
    await reader.queryOpen("SELECT _id, body->>'Status' FROM cards ORDER BY pos");
    expect(await reader.queryNext(3)).toHaveLength(3);
    // The listener's write: a transaction that takes the board's advisory lock (lock_timeout: it would fail after 30 s).
    const writer = await openPgStore(counting(db).connect, BOARD, 'x', false);
    onTestFinished(() => writer.close());
    await writer.applyDeliveries([{ kind: 'deleted', receivedAt: T0, id: 'c9' }, { kind: 'card', receivedAt: T0, card: { _id: 'c4', Status: 'Done' } }]);
    expect(await db.rows('SELECT count(*) FROM cards')).toEqual([[9]]);
    // The reader keeps its snapshot: the rows as they were when it began.
    expect(await db.rows("SELECT body->>'Status' FROM cards WHERE _id = 'c4'")).toEqual([['Done']]);
    // A new schema replaces the board's card_fields_<n>, which the reader's views do not hold.
    await writer.saveSchema([{ name: 'Owner', uuid: 'u9' }]);
    expect(await reader.queryNext(100)).toEqual(['c3', 'c4', 'c5', 'c6', 'c7', 'c8', 'c9'].map((id) => [id, 'Open']));
  });

  it('keeps every digit: int8 as bigint, numeric as a number when exact else text, json as text, times as text, bytea as bytes', async () => {
    const db = await pgSchema();
    await fill(db, BOARD, []);
    const { reader } = await readerOf(db);
    const { rows } = await all(
      reader,
      `SELECT 9007199254740993::int8, 12345678901234567890.123456789::numeric, 2.50::numeric, 0.1::numeric, 'NaN'::numeric,
              '{"b":1,"a":[2]}'::jsonb, '{"b":1, "a":2}'::json, '2026-11-27 18:00:00+00'::timestamptz, '2026-11-27'::date,
              '\\x00ff'::bytea, true, 7::int4, 1.5::float8, '{1,2}'::int8[], '1 day'::interval`,
    );
    expect(rows).toEqual([
      [9007199254740993n, '12345678901234567890.123456789', 2.5, 0.1, 'NaN', '{"a": [2], "b": 1}', '{"b":1, "a":2}', '2026-11-27 18:00:00+00', '2026-11-27', Buffer.from([0, 255]), true, 7, 1.5, '{1,2}', '1 day'],
    ]);
  });

  it('says a statement the server refuses is the statement\'s fault (exit 2), with the tables as the hint', async () => {
    const db = await pgSchema();
    await fill(db, BOARD, TWO);
    const { reader } = await readerOf(db);
    const err = await rejection(reader.queryOpen('SELECT nope FROM cards'));
    expect(err).toBeInstanceOf(UsageError);
    expect(err.message).toBe('query: column "nope" does not exist');
    expect((err as UsageError).hint).toMatch(/cards, card_fields, fields, pulls and deliveries/);
    // One while its rows are read.
    await reader.queryOpen('SELECT 1 / (pos::int - pos::int) FROM cards');
    const late = await rejection(reader.queryNext(10));
    expect(late).toBeInstanceOf(UsageError);
    expect(late.message).toBe('query: division by zero');
    const parameter = await rejection(reader.queryOpen('SELECT $1::int'));
    expect(parameter).toBeInstanceOf(UsageError);
    expect(parameter.message).toBe('query has a parameter ($1), which nothing gives a value: write the value into the SQL; nothing was run.');
    expect((await all(reader, 'SELECT 1')).rows).toEqual([[1]]);
  });
});
