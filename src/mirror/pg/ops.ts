// A board's mirror on a PostgreSQL server: MirrorStore's operations (the rules of sqlite-store.ts, one by one)
// as asynchronous calls on node-postgres connections, which the mirror's thread runs (worker.ts).
// One connection writes: every change is one transaction that first takes the board's advisory lock
// (migrations.ts inWrite, and writeBatch for the frequent ones: a batch of deliveries or writes, a page), so
// two writers of one board (a pull and a listener, two pulls) take turns as two SQLite writers do, and each
// sees what the other committed before it. Its commits do not wait for the server's disk (synchronous_commit off): a commit that
// returned is the server's, whatever becomes of this process; sync() makes them survive a crash of the server's
// machine too. Walks of the cards (`cards()`) read on connections of their own, each in a read-only
// transaction of one snapshot: never half a pull, never a wait for a writer, and writes meanwhile are fine.
import { isDeepStrictEqual } from 'node:util';
import type pg from 'pg';
import type { Card, Field } from '../../spec-types.js';
import { cutUtf8, idOf, touchedBy } from '../card-run.js';
import { type MirrorBoard, type MirrorChange, type MirrorDelivery, type MirrorStatus, type PullCursor, LISTENER_BEAT_MS } from '../types.js';
import { columnNames, quoteIdentifier } from '../view.js';
import { fieldsViewName, inWrite, openBoard, type OpenedBoard, writeBatch, WRITER_SETTINGS } from './migrations.js';
import { type DeliveryRow, columns, PgRun, unnestOf } from './pg-run.js';
import type { PgStoreOps } from './protocol.js';
import { releasePullLock, takePullLock } from './pull-lock.js';
import { jsonbString, jsonbText, noNul, quoteLiteral, sqlArray, sqlValue } from './text.js';

type PullRow = [id: number, startedAt: string, startSeq: number, nextPage: number, pages: number, cards: number, finishedAt: string | null, deleted: number | null];

const PULL = 'SELECT id, started_at, start_seq, next_page, pages, cards, finished_at, deleted FROM pulls';

/** The longest identifier PostgreSQL keeps, in bytes (a longer one is cut, and two cut alike would clash). */
const MAX_IDENTIFIER = 63;

/** A pull's row as the cursor its walker holds. */
function cursorOf(row: PullRow, resumed: boolean): PullCursor {
  return { id: row[0], startedAt: row[1], startSeq: row[2], nextPage: row[3], pages: row[4], cards: row[5], resumed };
}

/** A connection as the store uses it: int8 read as a number (sequence numbers and counts stay below 2^53). */
function adopt(client: pg.Client): pg.Client {
  client.setTypeParser(20, Number);
  // A connection lost while idle says so here; the next query on it fails with the reason.
  client.on('error', () => undefined);
  return client;
}

/**
 * The columns of the per-field view: columnNames (view.ts), each cut to the length PostgreSQL keeps and
 * made unique again when cutting made two alike.
 */
function viewColumns(fieldNames: readonly string[]): string[] {
  const taken = new Set(['_id']);
  return columnNames(fieldNames).map((name) => {
    let column = cutUtf8(name, MAX_IDENTIFIER).text;
    for (let n = 2; taken.has(column); n++) column = `${cutUtf8(name, MAX_IDENTIFIER - `_${n}`.length).text}_${n}`;
    taken.add(column);
    return column;
  });
}

/** The columns of the per-field view after `_id`: each field's value in a card's `body`, as text (also the query reader's card_fields). */
export function fieldColumns(fieldNames: readonly string[]): string[] {
  return viewColumns(fieldNames).map((column, i) => `body->>${quoteLiteral(jsonbString(fieldNames[i]!))} AS ${quoteIdentifier(column)}`);
}

/** The statements that replace the per-field view of board `number`: `_id` and each field's value as text. */
function fieldsView(number: number, fieldNames: readonly string[]): string {
  const view = fieldsViewName(number);
  return `DROP VIEW IF EXISTS ${view}; CREATE VIEW ${view} AS SELECT ${['_id', ...fieldColumns(fieldNames)].join(', ')} FROM cards WHERE board = ${number}`;
}

/**
 * Open the mirror of `board` on the server `connect` reaches (each call: a new connected client), making it
 * when `create` (else notFilled when absent); a newer format, or tables of the mirror's names that another
 * program made, are refused with nothing changed.
 */
export async function openPgStore(connect: () => Promise<pg.Client>, board: MirrorBoard, location: string, create: boolean): Promise<PgStoreOps> {
  const client = await writerOf(connect);
  try {
    const opened = await openBoard(client, board, location, create);
    return storeOps(client, connect, opened, board, location);
  } catch (err) {
    await client.end().catch(() => undefined);
    throw err;
  }
}

/** A new connection for writing, in the writer's session settings (migrations.ts WRITER_SETTINGS). */
async function writerOf(connect: () => Promise<pg.Client>): Promise<pg.Client> {
  const client = adopt(await connect());
  try {
    await client.query(WRITER_SETTINGS);
    return client;
  } catch (err) {
    await client.end().catch(() => undefined);
    throw err;
  }
}

/** The operations that do not begin on the writer's connection: walks (connections of their own) and close. */
const OFF_WRITER = new Set<string>(['cardsOpen', 'cardsNext', 'cardsClose', 'close']);

/**
 * The operations of the mirror of board `opened` (its number `b`, and `key`, that of its locks) on the writer
 * connection `first`. The thread calls them one at a time (a call's transaction is the connection's only
 * one), walks excepted: those have connections of their own.
 */
function storeOps(first: pg.Client, connect: () => Promise<pg.Client>, opened: OpenedBoard, board: MirrorBoard, location: string): PgStoreOps {
  const { number: b, key } = opened;
  let w = first;
  let closed = false;
  // The writer's connection lost (the server restarted, or closed it idle): the call that finds it so fails,
  // and the next one begins on a new connection. A call is never sent again on its own: whether a commit
  // whose answer was lost took place, nobody knows (a listener's sender sends the delivery again).
  let lost = false;
  const watch = (client: pg.Client) => {
    const mark = () => (lost ||= client === w);
    client.on('error', mark).on('end', mark);
  };
  watch(w);
  // The pull lock (pull-lock.ts) is the session's: held while `pulling`, and taken again on a new connection
  // (or the pull refused, when another pull took it meanwhile).
  let pulling = false;
  const ready = async () => {
    if (!lost || closed) return;
    await w.end().catch(() => undefined);
    w = await writerOf(connect);
    watch(w);
    lost = false;
    if (pulling) await takePullLock(w, key, location);
  };
  const q = async <R extends unknown[]>(text: string, values: unknown[] = []): Promise<R[]> => (await w.query<R>({ text, values, rowMode: 'array' })).rows;
  const write = <T>(fn: () => Promise<T>): Promise<T> => inWrite(w, location, key, fn);
  const openPull = async () => (await q<PullRow>(`${PULL} WHERE board = $1 AND finished_at IS NULL ORDER BY id DESC LIMIT 1`, [b]))[0];
  const lastPos = async () => ((await q<[number | null]>('SELECT max(pos) FROM cards WHERE board = $1', [b]))[0]![0] ?? 0) + 1;
  const count = async () => (await q<[number]>('SELECT count(*) FROM cards WHERE board = $1', [b]))[0]![0];

  // Walks: each on a connection of its own in a transaction of one snapshot; connections kept for the next.
  const idle: pg.Client[] = [];
  const walks = new Map<number, pg.Client>();
  let lastWalk = 0;
  const endWalk = async (walk: number) => {
    const reader = walks.get(walk);
    if (reader === undefined) return;
    walks.delete(walk);
    try {
      await reader.query('COMMIT');
      idle.push(reader);
    } catch {
      await reader.end().catch(() => undefined);
    }
  };

  const ops: PgStoreOps = {
    async lockPull() {
      await takePullLock(w, key, location);
      pulling = true;
    },
    async unlockPull() {
      if (!pulling) return;
      pulling = false;
      await releasePullLock(w, key);
    },
    async schema(): Promise<Field[] | undefined> {
      const rows = await q<[number | null, string | null]>(
        'SELECT b.schema_fields, f.body_text FROM boards b LEFT JOIN fields f ON f.board = b.board WHERE b.board = $1 ORDER BY f.pos',
        [b],
      );
      if (rows[0]?.[0] == null) return undefined;
      return rows.flatMap(([, text]) => (text === null ? [] : [JSON.parse(text) as Field]));
    },

    async saveSchema(fields: Field[]): Promise<void> {
      await write(async () => {
        // Every pull saves the schema, which seldom changes: the view is made again only when its fields did, for
        // dropping it waits for every reader of it (a query paged slowly) to end.
        const [[saved, names]] = (await q<[number | null, string[]]>(
          'SELECT schema_fields, array(SELECT name FROM fields WHERE board = $1 ORDER BY pos) FROM boards WHERE board = $1',
          [b],
        )) as [[number | null, string[]]];
        const same = saved !== null && isDeepStrictEqual(names, fields.map((f) => jsonbString(f.name)));
        await q('DELETE FROM fields WHERE board = $1', [b]);
        const texts = fields.map((f) => JSON.stringify(f));
        await q(
          `WITH f AS (INSERT INTO fields (board, pos, name, body, body_text)
                      SELECT $1, u.n - 1, u.name, u.body::jsonb, u.text FROM unnest($2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS u(name, body, text, n))
           UPDATE boards SET schema_fields = $5 WHERE board = $1`,
          [b, fields.map((f) => jsonbString(f.name)), texts.map(jsonbText), texts, fields.length],
        );
        if (!same) await w.query(fieldsView(b, fields.map((f) => f.name)));
      });
    },

    async card(id: string): Promise<Card | undefined> {
      const row = (await q<[string]>('SELECT body_text FROM cards WHERE board = $1 AND _id = $2', [b, noNul(id)]))[0];
      return row === undefined ? undefined : (JSON.parse(row[0]) as Card);
    },

    count,

    async cardsOpen(): Promise<number> {
      for (;;) {
        const kept = idle.pop();
        const reader = kept ?? adopt(await connect());
        try {
          await reader.query(`BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; DECLARE walk NO SCROLL CURSOR FOR SELECT body_text FROM cards WHERE board = ${b} ORDER BY pos, _id`);
          walks.set(++lastWalk, reader);
          return lastWalk;
        } catch (err) {
          await reader.end().catch(() => undefined);
          // A connection kept idle may have been closed by the server meanwhile: the walk takes a new one.
          if (kept === undefined) throw err;
        }
      }
    },

    async cardsNext(walk: number, max: number): Promise<string[]> {
      const reader = walks.get(walk);
      if (reader === undefined) return [];
      const size = Math.max(1, Math.floor(max));
      let texts: string[];
      try {
        texts = (await reader.query<[string]>({ text: `FETCH ${size} FROM walk`, rowMode: 'array' })).rows.map((r) => r[0]);
      } catch (err) {
        walks.delete(walk);
        await reader.end().catch(() => undefined);
        throw err;
      }
      if (texts.length < size) await endWalk(walk);
      return texts;
    },

    cardsClose: endWalk,

    beginPull(now: string): Promise<PullCursor> {
      return write(async () => {
        const open = await openPull();
        if (open !== undefined) return cursorOf(open, true);
        const [[id, startSeq]] = (await q<[number, number]>(
          `INSERT INTO pulls (board, id, started_at, start_seq)
           SELECT $1, coalesce(max(p.id), 0) + 1, $2, (SELECT seq FROM boards WHERE board = $1) FROM pulls p WHERE p.board = $1
           RETURNING id, start_seq`,
          [b, now],
        )) as [[number, number]];
        return { id, startedAt: now, startSeq, nextPage: 0, pages: 0, cards: 0, resumed: false };
      });
    },

    abandonPull(): Promise<PullCursor | undefined> {
      return write(async () => {
        const open = await openPull();
        if (open === undefined) return undefined;
        // Its row goes (the next pull takes its number), and with it every sign that a card was seen by it.
        await q('WITH u AS (UPDATE cards SET pulled = NULL WHERE board = $1 AND pulled = $2) DELETE FROM pulls WHERE board = $1 AND id = $2', [b, open[0]]);
        return cursorOf(open, true);
      });
    },

    async pulledBy(pull: PullCursor, id: string): Promise<boolean> {
      return (await q('SELECT 1 FROM cards WHERE board = $1 AND _id = $2 AND pulled = $3', [b, noNul(id), pull.id])).length > 0;
    },

    savePage: (pull, page, cards) => savePage(w, opened, location, pull, page, cards),

    async unseen(pull: PullCursor): Promise<{ id: string; missed: number }[]> {
      const rows = await q<[string, number]>(
        'SELECT _id, missed FROM cards WHERE board = $1 AND pulled IS DISTINCT FROM $2 AND delivered_seq <= $3 ORDER BY pos, _id',
        [b, pull.id, pull.startSeq],
      );
      return rows.map(([id, missed]) => ({ id, missed }));
    },

    confirm(pull: PullCursor, card: Card): Promise<MirrorChange | undefined> {
      const id = idOf(card);
      return write(async () => {
        const row = (await q<[string]>('SELECT body_text FROM cards WHERE board = $1 AND _id = $2', [b, noNul(id)]))[0];
        const text = JSON.stringify(card);
        if (row === undefined) {
          await q(
            'INSERT INTO cards (board, _id, body, body_text, pos, pulled, missed, delivered_seq, updated_at) VALUES ($1, $2, $3::jsonb, $4, $5, $6, 0, 0, $7)',
            [b, noNul(id), jsonbText(text), text, await lastPos(), pull.id, pull.startedAt],
          );
          return { id, after: card };
        }
        const before = JSON.parse(row[0]) as Card;
        const same = isDeepStrictEqual(before, card);
        await q(
          `UPDATE cards SET body = coalesce($3::jsonb, body), body_text = coalesce($4, body_text), pulled = $5, missed = 0, updated_at = coalesce($6, updated_at)
           WHERE board = $1 AND _id = $2`,
          [b, noNul(id), same ? null : jsonbText(text), same ? null : text, pull.id, same ? null : pull.startedAt],
        );
        return same ? undefined : { id, before, after: card };
      });
    },

    finishPull(pull: PullCursor, gone: string[], now: string): Promise<MirrorChange[]> {
      return write(async () => {
        const deleted = new Map(await q<[string, string]>('DELETE FROM cards WHERE board = $1 AND _id = ANY($2::text[]) RETURNING _id, body_text', [b, gone.map(noNul)]));
        const out: MirrorChange[] = [];
        for (const id of gone) {
          const text = deleted.get(noNul(id));
          if (text === undefined) continue;
          deleted.delete(noNul(id));
          out.push({ id, before: JSON.parse(text) as Card });
        }
        await q(
          `WITH m AS (UPDATE cards SET missed = missed + 1 WHERE board = $1 AND pulled IS DISTINCT FROM $2 AND delivered_seq <= $3),
                e AS (UPDATE pulls SET finished_at = $4, deleted = $5 WHERE board = $1 AND id = $2),
                d AS (DELETE FROM deliveries WHERE board = $1 AND seq <= $3)
           DELETE FROM tombstones WHERE board = $1 AND seq <= $3`,
          [b, pull.id, pull.startSeq, now, out.length],
        );
        return out;
      });
    },

    applyDeliveries: (deliveries) => applyDeliveries(w, opened, location, deliveries),

    applyWrites(cards: Card[], now: string): Promise<MirrorChange[]> {
      if (cards.length === 0) return Promise.resolve([]);
      const ids = cards.map(idOf);
      return writeBatch(w, location, key, PgRun.readSql(b, ids), (rows) => {
        const run = PgRun.from(b, ids, rows);
        const out = run.applyWrites(cards, now);
        return { out, write: run.endSql() };
      });
    },

    async sync(): Promise<void> {
      // A commit that waits for the server's log to reach its disk, and with it everything committed before
      // (the log is written in order). A transaction that writes nothing commits without the log: this one
      // rewrites its board's row as it is.
      await w.query(`BEGIN; SET LOCAL synchronous_commit = on; UPDATE boards SET seq = seq WHERE board = ${b}; COMMIT`);
    },

    async listenerBeat(since: string, now: string): Promise<void> {
      await write(async () => {
        // A listener killed before it could say it stopped: forgotten once silent for a day.
        await q(
          `WITH f AS (DELETE FROM listener WHERE board = $1 AND since <> $2 AND beat_at::timestamptz < $3::text::timestamptz - interval '1 day')
           INSERT INTO listener (board, since, beat_at) VALUES ($1, $2, $3::text) ON CONFLICT (board, since) DO UPDATE SET beat_at = excluded.beat_at`,
          [b, since, now],
        );
      });
    },

    async listenerGone(since: string): Promise<void> {
      await write(() => q('DELETE FROM listener WHERE board = $1 AND since = $2', [b, since]));
    },

    async status(): Promise<MirrorStatus> {
      const last = (await q<PullRow>(`${PULL} WHERE board = $1 AND finished_at IS NOT NULL ORDER BY id DESC LIMIT 1`, [b]))[0];
      const open = await openPull();
      const [[applied, unplaced, lastAt]] = (await q<[number, number, string | null]>(
        "SELECT count(*), count(*) FILTER (WHERE kind = 'unplaced'), max(received_at) FROM deliveries WHERE board = $1 AND seq > $2",
        [b, last?.[2] ?? 0],
      )) as [[number, number, string | null]];
      // The listener that has fed the mirror longest among those alive as late as the latest beat.
      const listener = (
        await q<[string, string]>(
          `SELECT since, beat_at FROM listener WHERE board = $1
             AND beat_at::timestamptz >= (SELECT max(beat_at::timestamptz) FROM listener WHERE board = $1) - $2 * interval '1 millisecond'
           ORDER BY since LIMIT 1`,
          [b, 2 * LISTENER_BEAT_MS],
        )
      )[0];
      const status: MirrorStatus = { location, board, cards: await count(), deliveries: { applied, unplaced } };
      if (lastAt !== null) status.deliveries.lastAt = lastAt;
      if (last !== undefined) status.lastPull = { id: last[0], startedAt: last[1], finishedAt: last[6]!, pages: last[4], cards: last[5], deleted: last[7] ?? 0 };
      if (open !== undefined) status.openPull = { id: open[0], startedAt: open[1], nextPage: open[3], pages: open[4], cards: open[5] };
      if (listener !== undefined) status.listener = { since: listener[0], beatAt: listener[1] };
      return status;
    },

    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      const readers = [...idle, ...walks.values()];
      idle.length = 0;
      walks.clear();
      await Promise.all([w, ...readers].map((c) => c.end().catch(() => undefined)));
    },
  };
  // Each operation on the writer's connection begins with a new one when it was lost.
  for (const name of Object.keys(ops) as (keyof PgStoreOps)[]) {
    if (OFF_WRITER.has(name)) continue;
    const op = ops[name] as (...args: unknown[]) => Promise<unknown>;
    (ops as unknown as Record<string, unknown>)[name] = async (...args: unknown[]) => {
      await ready();
      return op(...args);
    };
  }
  return ops;
}

/** savePage (MirrorStore): the page's rows read in one statement, its cards placed in memory, written in one. */
function savePage(w: pg.Client, { number: b, key }: OpenedBoard, location: string, pull: PullCursor, page: number, cards: Card[]): Promise<MirrorChange[]> {
  const ids = [...new Set(cards.map(idOf))];
  const read = `SELECT i.n, c.body_text, c.delivered_seq, t.seq, (SELECT max(pos) FROM cards WHERE board = ${b})
                FROM unnest(${sqlArray(ids, 'text')}) WITH ORDINALITY AS i(id, n)
                LEFT JOIN cards c ON c.board = ${b} AND c._id = i.id LEFT JOIN tombstones t ON t.board = ${b} AND t._id = i.id`;
  return writeBatch(w, location, key, read, (result) => {
    const rows = result as [number, string | null, number | null, number | null, number | null][];
    /** Each card of the page as the table holds it, as this page leaves it (`text`), and where the page put it. */
    const known = new Map<string, { held: boolean; text: string | undefined; seq: number; tomb: number | null; pos?: number; changed: boolean }>();
    for (const [n, text, seq, tomb] of rows) known.set(ids[n - 1]!, { held: text !== null, text: text ?? undefined, seq: seq ?? 0, tomb, changed: false });
    let pos = (rows[0]?.[4] ?? 0) + 1;
    const out: MirrorChange[] = [];
    for (const card of cards) {
      const k = known.get(card._id)!;
      // A delivery deleted it after the pull began: the page is older than that.
      if (k.tomb !== null && k.tomb > pull.startSeq) continue;
      k.pos = pos++;
      if (k.text === undefined) {
        k.text = JSON.stringify(card);
        k.changed = true;
        out.push({ id: card._id, after: card });
      } else if (k.seq <= pull.startSeq) {
        // (A delivery or own write changed it after the pull began: its body stands; the sighting counts.)
        const before = JSON.parse(k.text) as Card;
        if (!isDeepStrictEqual(before, card)) {
          k.text = JSON.stringify(card);
          k.changed = true;
          out.push({ id: card._id, before, after: card });
        }
      }
    }
    const made: (string | number | boolean | null)[][] = [];
    const seen: (string | number | boolean | null)[][] = [];
    for (const [id, k] of known) {
      if (k.pos === undefined) continue;
      if (!k.held) made.push([id, jsonbText(k.text!), k.text!, k.pos]);
      else seen.push([id, k.changed ? jsonbText(k.text!) : null, k.changed ? k.text! : null, k.pos, k.seq > pull.startSeq]);
    }
    const arrays = (rows: unknown[][], types: string[]) => unnestOf(columns(rows, types.length), types);
    const [p, at] = [pull.id, sqlValue(pull.startedAt)];
    const write = `WITH ins AS (INSERT INTO cards (board, _id, body, body_text, pos, pulled, missed, delivered_seq, updated_at)
                    SELECT ${b}, u.id, u.body::jsonb, u.text, u.pos, ${p}, 0, 0, ${at} FROM unnest(${arrays(made, ['text', 'text', 'text', 'float8'])}) AS u(id, body, text, pos)),
            upd AS (UPDATE cards c SET body = coalesce(u.body::jsonb, c.body), body_text = coalesce(u.text, c.body_text), pos = u.pos, pulled = ${p},
                      missed = CASE WHEN u.sighted THEN c.missed ELSE 0 END, updated_at = CASE WHEN u.text IS NULL THEN c.updated_at ELSE ${at} END
                    FROM unnest(${arrays(seen, ['text', 'text', 'text', 'float8', 'boolean'])}) AS u(id, body, text, pos, sighted)
                    WHERE c.board = ${b} AND c._id = u.id)
       UPDATE pulls SET next_page = greatest(next_page, ${page + 1}), pages = pages + 1, cards = cards + ${cards.length} WHERE board = ${b} AND id = ${p}`;
    return { out, write };
  });
}

/** applyDeliveries (MirrorStore): the batch in one transaction, in order, as a PgRun. */
async function applyDeliveries(w: pg.Client, { number: b, key }: OpenedBoard, location: string, deliveries: MirrorDelivery[]): Promise<MirrorChange[]> {
  if (deliveries.length === 0) return [];
  const touched = touchedBy(deliveries);
  return writeBatch(w, location, key, PgRun.readSql(b, touched), (rows) => {
    const run = PgRun.from(b, touched, rows);
    const { changes, logged } = run.applyDeliveries(deliveries);
    const text = (t: string | undefined) => (t === undefined ? null : noNul(t));
    const rowsLogged: DeliveryRow[] = logged.map((l) => [l.seq, l.receivedAt, l.kind, text(l.name), text(l.cardId), text(l.body?.text), l.body?.cut ?? false]);
    return { out: changes, write: run.endSql(rowsLogged) };
  });
}
