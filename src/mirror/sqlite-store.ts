// A board's mirror in one SQLite file, on libsql (better-sqlite3's API, with a prebuilt binary for every Node
// the CLI supports). The file is for other tools too (the sqlite3 shell, Python, Datasette), so its tables
// and columns are stable names, documented where they are made (SCHEMA below):
//   cards        one row per card the mirror believes is on the board: `_id`, `body` (the card's JSON), its
//                board order, the pull that last saw it, and the last delivery or write that touched it;
//   card_fields  a view: `_id` and one column per field of the schema (view.ts);
//   fields       the board's schema, one row per field in its order;
//   pulls        every pull: begun, how far it got, when it finished;
//   deliveries   the webhook deliveries applied since the last complete pull began;
//   tombstones   cards a delivery deleted, so that an older page read by a running pull does not bring them back;
//   listener     a listener feeding the mirror, and its last sign of life;
//   meta         the file's format and the board it holds.
//
// Every change is one transaction begun IMMEDIATE (it takes the write lock at once, so two processes wait
// for each other through the busy timeout instead of failing when a reader turns into a writer).
import { closeSync, fdatasyncSync, openSync } from 'node:fs';
import { createRequire } from 'node:module';
import { isDeepStrictEqual } from 'node:util';
import type Libsql from 'libsql';
import type { Clock } from '../clock.js';
import { CardboardError, UsageError } from '../errors.js';
import type { Card, Field } from '../spec-types.js';
import { type MirrorBoard, type MirrorChange, type MirrorDelivery, type MirrorStatus, type MirrorStore, type PullCursor, LISTENER_BEAT_MS } from './types.js';
import { CardRun, idOf, type RunStatements, runStatements, touchedBy } from './card-run.js';
import { lockPullFile, type PullLock } from './pull-lock.js';
import { cardFieldsView } from './view.js';

type Database = Libsql.Database;
type Statement = Libsql.Statement;

/** The format of the file this code writes; an older one is migrated on open, a newer one refused. */
export const MIRROR_FORMAT = 1;

/**
 * How long a write waits for another process's (a pull's page, a listener's burst) before it fails, in
 * milliseconds (libsql's `timeout` option sets SQLite's busy timeout, in milliseconds). One transaction
 * holds the lock for at most a page or a burst, or a pull's final reconcile: far less than this.
 */
export const BUSY_TIMEOUT_MS = 30_000;


/**
 * The SQL that brings a file from format i to i + 1 (MIGRATIONS[0] makes a new file format 1). A change of
 * the layout appends one; a file is migrated in one transaction on open.
 */
const MIGRATIONS: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
   CREATE TABLE cards (
     _id TEXT PRIMARY KEY,
     body TEXT NOT NULL,            -- the card's JSON
     pos REAL NOT NULL,             -- board order: the order the last pull read the cards in
     pulled INTEGER,                -- the last pull that saw the card (pulls.id)
     missed INTEGER NOT NULL DEFAULT 0,        -- complete pulls in a row that did not see it
     delivered_seq INTEGER NOT NULL DEFAULT 0, -- the last delivery or own write that changed it
     updated_at TEXT                -- when this body was learned: a delivery's receipt, a write's time, a pull's start
   );
   CREATE INDEX cards_pos ON cards (pos);
   CREATE TABLE fields (pos INTEGER PRIMARY KEY, name TEXT NOT NULL, body TEXT NOT NULL);
   CREATE TABLE pulls (
     id INTEGER PRIMARY KEY, started_at TEXT NOT NULL, start_seq INTEGER NOT NULL,
     next_page INTEGER NOT NULL DEFAULT 0, pages INTEGER NOT NULL DEFAULT 0, cards INTEGER NOT NULL DEFAULT 0,
     finished_at TEXT, deleted INTEGER
   );
   CREATE TABLE deliveries (
     seq INTEGER PRIMARY KEY, received_at TEXT NOT NULL,
     kind TEXT NOT NULL,            -- card, deleted, comment or unplaced
     name TEXT, card_id TEXT,
     body TEXT,                     -- an unplaced delivery's text, at most 64 KiB
     body_cut INTEGER NOT NULL DEFAULT 0       -- 1 when body holds only the first 64 KiB
   );
   CREATE TABLE tombstones (_id TEXT PRIMARY KEY, seq INTEGER NOT NULL);
   CREATE TABLE listener (since TEXT PRIMARY KEY, beat_at TEXT NOT NULL);
   CREATE VIEW card_fields AS SELECT _id FROM cards;`,
];

/** The error for a mirror that is not there (exit 1: nothing is wrong with the command, the mirror is absent). */
export function notFilled(location: string): CardboardError {
  return new CardboardError(`No mirror of this board at ${location}.`, {
    hint: 'Fill it with `cardboard mirror pull`, or keep it fed with `cardboard webhook listen --mirror`.',
  });
}

/** A board as a message names it. */
function boardName(server: string, id: string): string {
  return `board ${JSON.stringify(id)} of ${server}`;
}

/** The SQLite error code of `err` (SQLITE_BUSY, SQLITE_NOTADB…), if it is one. */
export function sqliteCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_') ? code : undefined;
}

/** libsql, loaded when a mirror is opened: its native binding costs a command without a mirror nothing. */
export function loadLibsql(): typeof Libsql {
  return createRequire(import.meta.url)('libsql') as typeof Libsql;
}

/** Open `path` with libsql, turning the errors of a path that holds no SQLite into the user's terms. */
export function openDatabase(path: string, location: string): Database {
  const Database = loadLibsql();
  let db: Database;
  try {
    db = new Database(path, { timeout: BUSY_TIMEOUT_MS });
  } catch (err) {
    // libsql says only "Unable to open connection … : 14" (SQLITE_CANTOPEN), with no code.
    throw new CardboardError(`Cannot open the mirror ${location}.`, { hint: 'Check that it is a file you can read and write, or point CARDBOARD_MIRROR elsewhere.', cause: err });
  }
  try {
    // The first read tells a file that is not SQLite.
    db.prepare('SELECT count(*) FROM sqlite_master').raw().get();
    return db;
  } catch (err) {
    db.close();
    if (sqliteCode(err) === 'SQLITE_NOTADB') throw new UsageError(`${location} is not a SQLite file, so it cannot hold a mirror; nothing was changed.`, { hint: 'Point CARDBOARD_MIRROR at another file, or unset it.' });
    throw err;
  }
}

/** The value of `key` in a mirror's `meta` table, read with a one-off statement (before the instance has its own). */
function metaOf(db: Database, key: string): string | undefined {
  const row = db.prepare('SELECT value FROM meta WHERE key = ?').raw().get(key) as [string] | undefined;
  return row?.[0];
}

/** Whether the file has a `meta` table, and whether it holds anything else (another program's database). */
function tablesOf(db: Database): { meta: boolean; others: boolean } {
  const names = (db.prepare("SELECT name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'").raw().all() as [string][]).map((r) => r[0]);
  return { meta: names.includes('meta'), others: names.some((n) => n !== 'meta') };
}

/**
 * Check that the mirror in `db` is one this code reads and holds `board`, refusing (nothing changed) a
 * newer format or another board's mirror. Returns the file's format, 0 for a file not made yet.
 */
export function checkMirror(db: Database, board: MirrorBoard, location: string): number {
  const tables = tablesOf(db);
  if (!tables.meta) {
    if (tables.others) throw new UsageError(`${location} is a SQLite database of something else, not a mirror; nothing was changed.`, { hint: 'Point CARDBOARD_MIRROR at a new file, or unset it.' });
    return 0;
  }
  const format = Number(metaOf(db, 'format') ?? 0);
  if (format > MIRROR_FORMAT) {
    throw new CardboardError(`The mirror ${location} is in format ${format}, newer than this cardboard reads (${MIRROR_FORMAT}); nothing was changed.`, {
      hint: 'Upgrade cardboard, or point CARDBOARD_MIRROR at another file.',
    });
  }
  const server = metaOf(db, 'server');
  const id = metaOf(db, 'board_id');
  if (server !== undefined && id !== undefined && (server !== board.server || id !== board.id)) {
    throw new UsageError(`The mirror ${location} holds ${boardName(server, id)}, not ${boardName(board.server, board.id)}; nothing was changed.`, {
      hint: 'Point CARDBOARD_MIRROR at another file for this board, or unset it.',
    });
  }
  return format;
}

/** Run `fn` in one write transaction of `db` (BEGIN IMMEDIATE), rolled back if it throws. */
function inWrite<T>(db: Database, location: string, fn: () => T): T {
  try {
    db.exec('BEGIN IMMEDIATE');
  } catch (err) {
    if (sqliteCode(err) === 'SQLITE_BUSY') {
      throw new CardboardError(`The mirror ${location} stayed busy for ${BUSY_TIMEOUT_MS / 1000}s: another process is writing to it.`, { hint: 'Run again when the other pull or import is done.', cause: err });
    }
    throw err;
  }
  try {
    const out = fn();
    db.exec('COMMIT');
    return out;
  } catch (err) {
    if (db.inTransaction) db.exec('ROLLBACK');
    throw err;
  }
}

/** Make what was written to the file at `path` reach the disk (fdatasync). */
function syncFile(path: string): void {
  // r+: Windows flushes only a file opened for writing; nothing is written.
  const fd = openSync(path, 'r+');
  try {
    fdatasyncSync(fd);
  } finally {
    closeSync(fd);
  }
}


type CardRow = [body: string, deliveredSeq: number];
type PullRow = [id: number, startedAt: string, startSeq: number, nextPage: number, pages: number, cards: number, finishedAt: string | null, deleted: number | null];

/** The statements of a mirror, prepared once per connection. */
function prepareAll(db: Database) {
  const p = (sql: string) => {
    const stmt = db.prepare(sql);
    // Rows as arrays: libsql adds a `_metadata` key to a row read as an object.
    return stmt.reader ? stmt.raw(true) : stmt;
  };
  return {
    meta: p('SELECT value FROM meta WHERE key = ?'),
    setMeta: p('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value'),
    card: p('SELECT body, delivered_seq FROM cards WHERE _id = ?'),
    count: p('SELECT count(*) FROM cards'),
    all: p('SELECT body FROM cards ORDER BY pos, _id'),
    lastPos: p('SELECT max(pos) FROM cards'),
    insertCard: p('INSERT INTO cards (_id, body, pos, pulled, missed, delivered_seq, updated_at) VALUES (?, ?, ?, ?, 0, ?, ?)'),
    pageCard: p('UPDATE cards SET body = ?, pos = ?, pulled = ?, missed = 0, updated_at = coalesce(?, updated_at) WHERE _id = ?'),
    // A card a delivery or write touched has no misses (a CardRun cleared them): only its place and its sighting change.
    sighted: p('UPDATE cards SET pos = ?, pulled = ? WHERE _id = ?'),
    confirmCard: p('UPDATE cards SET body = ?, pulled = ?, missed = 0, updated_at = coalesce(?, updated_at) WHERE _id = ?'),
    deleteCard: p('DELETE FROM cards WHERE _id = ?'),
    tombstone: p('SELECT seq FROM tombstones WHERE _id = ?'),
    openPull: p('SELECT id, started_at, start_seq, next_page, pages, cards, finished_at, deleted FROM pulls WHERE finished_at IS NULL ORDER BY id DESC LIMIT 1'),
    lastPull: p('SELECT id, started_at, start_seq, next_page, pages, cards, finished_at, deleted FROM pulls WHERE finished_at IS NOT NULL ORDER BY id DESC LIMIT 1'),
    newPull: p('INSERT INTO pulls (started_at, start_seq) VALUES (?, ?)'),
    advancePull: p('UPDATE pulls SET next_page = max(next_page, ?), pages = pages + 1, cards = cards + ? WHERE id = ?'),
    endPull: p('UPDATE pulls SET finished_at = ?, deleted = ? WHERE id = ?'),
    pulledBy: p('SELECT 1 FROM cards WHERE _id = ? AND pulled = ?'),
    unseen: p('SELECT _id, missed FROM cards WHERE pulled IS NOT ? AND delivered_seq <= ? ORDER BY pos, _id'),
    missUnseen: p('UPDATE cards SET missed = missed + 1 WHERE pulled IS NOT ? AND delivered_seq <= ?'),
    pruneDeliveries: p('DELETE FROM deliveries WHERE seq <= ?'),
    pruneTombstones: p('DELETE FROM tombstones WHERE seq <= ?'),
    deliveryCounts: p("SELECT count(*), coalesce(sum(kind = 'unplaced'), 0), max(received_at) FROM deliveries WHERE seq > ?"),
    fields: p('SELECT body FROM fields ORDER BY pos'),
    clearFields: p('DELETE FROM fields'),
    addField: p('INSERT INTO fields (pos, name, body) VALUES (?, ?, ?)'),
    checkpoint: p('PRAGMA wal_checkpoint(PASSIVE)'),
    beat: p('INSERT INTO listener (since, beat_at) VALUES (?, ?) ON CONFLICT (since) DO UPDATE SET beat_at = excluded.beat_at'),
    // A listener killed before it could say it stopped: forgotten once silent for a day.
    forgetListeners: p('DELETE FROM listener WHERE julianday(beat_at) < julianday(?) - 1'),
    gone: p('DELETE FROM listener WHERE since = ?'),
    // The listener that has fed the mirror longest among those alive as late as the latest beat.
    listener: p('SELECT since, beat_at FROM listener WHERE julianday(beat_at) >= (SELECT max(julianday(beat_at)) FROM listener) - ? ORDER BY since LIMIT 1'),
  } satisfies Record<string, Statement>;
}

/** A pull's row as the cursor its walker holds. */
function cursorOf(row: PullRow, resumed: boolean): PullCursor {
  return { id: row[0], startedAt: row[1], startSeq: row[2], nextPage: row[3], pages: row[4], cards: row[5], resumed };
}

/** The SQLite store of one board's mirror (MirrorStore). Open it with openMirror (open.ts). */
export class SqliteMirror implements MirrorStore {
  private readonly s: ReturnType<typeof prepareAll>;
  private readonly run: RunStatements;

  private constructor(
    private readonly db: Database,
    private readonly path: string,
    readonly location: string,
    readonly board: MirrorBoard,
  ) {
    this.s = prepareAll(db);
    this.run = runStatements(db);
  }

  /**
   * Open the mirror file at `path` (it exists: open.ts creates it owner-only first) for `board`. A file
   * with no mirror yet is made one when `create`, else refused as not filled; another board's mirror, a
   * newer format, or another program's database are refused with nothing changed.
   */
  static open(path: string, board: MirrorBoard, location: string, create: boolean): SqliteMirror {
    const db = openDatabase(path, location);
    try {
      const format = checkMirror(db, board, location);
      if (format === 0 && !create) throw notFilled(location);
      // WAL: a reader (a query, `card list --mirror`) never waits for the listener or a pull, nor they for
      // it. synchronous=NORMAL: a commit writes the WAL before it returns, so what it wrote survives a crash
      // of the process (kill -9: the OS holds it), as the listener's record file does (written before the
      // 200); the WAL reaches the disk at each checkpoint, which sync() runs (the listener: about once a
      // second while deliveries come), so a crash of the machine loses at most the last moments, as the
      // record file's background fdatasync does. FULL would sync the disk at every commit: a wait of
      // milliseconds each time, on the listener's event loop.
      // wal_autocheckpoint: SQLite's own checkpoint runs inside a commit once the log holds that many pages
      // (1000 by default: a listener under load would copy the log into the file several times a second,
      // each copy rewriting the same pages, the card index's, again). The listener checkpoints itself
      // (sync), and close() empties the log: this one is only a bound on the log's size (about 40 MB) for
      // a writer that does neither for a while.
      toWal(db, location);
      db.exec('PRAGMA synchronous = NORMAL; PRAGMA wal_autocheckpoint = 10000;');
      if (format < MIRROR_FORMAT) migrate(db, board, location);
      return new SqliteMirror(db, path, location, board);
    } catch (err) {
      db.close();
      throw err;
    }
  }

  private write<T>(fn: () => T): T {
    return inWrite(this.db, this.location, fn);
  }

  private metaNumber(key: string): number {
    const row = this.s.meta.get(key) as [string] | undefined;
    return row === undefined ? 0 : Number(row[0]);
  }

  private lastPos(): number {
    return ((this.s.lastPos.get() as [number | null])[0] ?? 0) + 1;
  }

  private row(id: string): CardRow | undefined {
    return this.s.card.get(id) as CardRow | undefined;
  }

  lockPull(clock: Clock): Promise<PullLock> {
    return lockPullFile(this.path, clock);
  }

  schema(): Field[] | undefined {
    if (this.s.meta.get('schema_fields') === undefined) return undefined;
    return (this.s.fields.all() as [string][]).map((r) => JSON.parse(r[0]) as Field);
  }

  saveSchema(fields: readonly Field[]): void {
    this.write(() => {
      this.s.clearFields.run();
      fields.forEach((field, i) => this.s.addField.run(i, field.name, JSON.stringify(field)));
      this.s.setMeta.run('schema_fields', String(fields.length));
      this.db.exec(cardFieldsView(fields.map((f) => f.name)));
    });
  }

  card(id: string): Card | undefined {
    const row = this.row(id);
    return row === undefined ? undefined : (JSON.parse(row[0]) as Card);
  }

  count(): number {
    return (this.s.count.get() as [number])[0];
  }

  *cards(): Iterable<Card> {
    // libsql walks each iterate() with rows of its own: walks one inside another, or one left unfinished,
    // share the statement safely.
    for (const row of this.s.all.iterate() as Iterable<[string]>) yield JSON.parse(row[0]) as Card;
  }

  beginPull(now: string): PullCursor {
    return this.write(() => {
      const open = this.s.openPull.get() as PullRow | undefined;
      if (open !== undefined) return cursorOf(open, true);
      const startSeq = this.metaNumber('seq');
      const id = Number(this.s.newPull.run(now, startSeq).lastInsertRowid);
      return { id, startedAt: now, startSeq, nextPage: 0, pages: 0, cards: 0, resumed: false };
    });
  }

  abandonPull(): PullCursor | undefined {
    return this.write(() => {
      const open = this.s.openPull.get() as PullRow | undefined;
      if (open === undefined) return undefined;
      // Its row goes (the next pull may take its number: rowids reuse the largest + 1), and with it every
      // sign that a card was seen by it. Rare: prepared here, not with the statements of every open.
      this.db.prepare('UPDATE cards SET pulled = NULL WHERE pulled = ?').run(open[0]);
      this.db.prepare('DELETE FROM pulls WHERE id = ?').run(open[0]);
      return cursorOf(open, true);
    });
  }

  pulledBy(pull: PullCursor, id: string): boolean {
    return this.s.pulledBy.get(id, pull.id) !== undefined;
  }

  savePage(pull: PullCursor, page: number, cards: readonly Card[]): MirrorChange[] {
    const changes = this.write(() => {
      const out: MirrorChange[] = [];
      let pos = this.lastPos();
      for (const card of cards) {
        const id = idOf(card);
        // A delivery deleted it after the pull began: the page is older than that.
        const tomb = this.s.tombstone.get(id) as [number] | undefined;
        if (tomb !== undefined && tomb[0] > pull.startSeq) continue;
        const row = this.row(id);
        if (row === undefined) {
          this.s.insertCard.run(id, JSON.stringify(card), pos++, pull.id, 0, pull.startedAt);
          out.push({ id, after: card });
        } else if (row[1] > pull.startSeq) {
          // A delivery or own write changed it after the pull began: its body stands; the sighting counts.
          this.s.sighted.run(pos++, pull.id, id);
        } else {
          const before = JSON.parse(row[0]) as Card;
          const same = isDeepStrictEqual(before, card);
          this.s.pageCard.run(same ? row[0] : JSON.stringify(card), pos++, pull.id, same ? null : pull.startedAt, id);
          if (!same) out.push({ id, before, after: card });
        }
      }
      this.s.advancePull.run(page + 1, cards.length, pull.id);
      return out;
    });
    pull.nextPage = Math.max(pull.nextPage, page + 1);
    pull.pages += 1;
    pull.cards += cards.length;
    return changes;
  }

  unseen(pull: PullCursor): { id: string; missed: number }[] {
    return (this.s.unseen.all(pull.id, pull.startSeq) as [string, number][]).map(([id, missed]) => ({ id, missed }));
  }

  confirm(pull: PullCursor, card: Card): MirrorChange | undefined {
    return this.write(() => {
      const id = idOf(card);
      const row = this.row(id);
      if (row === undefined) {
        this.s.insertCard.run(id, JSON.stringify(card), this.lastPos(), pull.id, 0, pull.startedAt);
        return { id, after: card };
      }
      const before = JSON.parse(row[0]) as Card;
      const same = isDeepStrictEqual(before, card);
      this.s.confirmCard.run(same ? row[0] : JSON.stringify(card), pull.id, same ? null : pull.startedAt, id);
      return same ? undefined : { id, before, after: card };
    });
  }

  finishPull(pull: PullCursor, gone: readonly string[], now: string): MirrorChange[] {
    return this.write(() => {
      const out: MirrorChange[] = [];
      for (const id of gone) {
        const row = this.row(id);
        if (row === undefined) continue;
        this.s.deleteCard.run(id);
        out.push({ id, before: JSON.parse(row[0]) as Card });
      }
      this.s.missUnseen.run(pull.id, pull.startSeq);
      this.s.endPull.run(now, out.length, pull.id);
      this.s.pruneDeliveries.run(pull.startSeq);
      this.s.pruneTombstones.run(pull.startSeq);
      return out;
    });
  }

  applyDeliveries(deliveries: readonly MirrorDelivery[]): MirrorChange[] {
    if (deliveries.length === 0) return [];
    return this.write(() => {
      const run = new CardRun(this.run, touchedBy(deliveries));
      const { changes, logged } = run.applyDeliveries(deliveries);
      run.end();
      this.run.logDeliveries.run(logged.map((l) => [l.seq, l.receivedAt, l.kind, l.name ?? null, l.cardId ?? null, l.body?.text ?? null, l.body?.cut ? 1 : 0]));
      return changes;
    });
  }

  applyWrites(cards: readonly Card[], now: string): MirrorChange[] {
    if (cards.length === 0) return [];
    return this.write(() => {
      const run = new CardRun(this.run, cards.map(idOf));
      const changes = run.applyWrites(cards, now);
      run.end();
      return changes;
    });
  }

  sync(): void {
    // PASSIVE: copies what it can without waiting for a reader; under synchronous=NORMAL a checkpoint syncs
    // the WAL to the disk before copying it, and the database file after. A reader still on an older state
    // (a query paged slowly) keeps it from copying, and then from syncing, what came after: the WAL is
    // synced here instead.
    const [, frames, copied] = this.s.checkpoint.get() as [number, number, number];
    if (copied < frames) syncFile(`${this.path}-wal`);
  }

  listenerBeat(since: string, now: string): void {
    this.write(() => {
      this.s.beat.run(since, now);
      this.s.forgetListeners.run(now);
    });
  }

  listenerGone(since: string): void {
    this.write(() => this.s.gone.run(since));
  }

  status(): MirrorStatus {
    const last = this.s.lastPull.get() as PullRow | undefined;
    const open = this.s.openPull.get() as PullRow | undefined;
    const [applied, unplaced, lastAt] = this.s.deliveryCounts.get(last?.[2] ?? 0) as [number, number, string | null];
    const listener = this.s.listener.get((2 * LISTENER_BEAT_MS) / 86_400_000) as [string, string] | undefined;
    const status: MirrorStatus = { location: this.location, board: this.board, cards: this.count(), deliveries: { applied, unplaced } };
    if (lastAt !== null) status.deliveries.lastAt = lastAt;
    if (last !== undefined) status.lastPull = { id: last[0], startedAt: last[1], finishedAt: last[6]!, pages: last[4], cards: last[5], deleted: last[7] ?? 0 };
    if (open !== undefined) status.openPull = { id: open[0], startedAt: open[1], nextPage: open[3], pages: open[4], cards: open[5] };
    if (listener !== undefined) status.listener = { since: listener[0], beatAt: listener[1] };
    return status;
  }

  /**
   * libsql's close() does not close the connection: each statement prepared on it (this store keeps its
   * own for its life) holds the connection until V8 collects the statement, and SQLite closes it only then,
   * at a moment no one chooses, or never when the process ends by process.exit, as the CLI does. Closing
   * the last connection, SQLite copies the write-ahead log into the file and deletes the log: so the
   * file changed long after close(), and a CLI run left its changes in board.db-wal, not in board.db (a
   * copy of the file alone, or a reader of it alone, `?immutable=1`, saw none of them). A checkpoint here
   * copies every change into the file now and empties the log, so the file is whole when close() returns
   * and the late close has nothing left to write into it. It waits for no one (busy timeout 0): while
   * another process reads or writes, it copies what it can and the rest stays in the log for a later one.
   */
  close(): void {
    if (!this.db.open) return;
    try {
      this.db.exec('PRAGMA busy_timeout = 0; PRAGMA wal_checkpoint(TRUNCATE);');
    } catch {
      // The changes stay in the log, where every SQLite reader finds them; a later checkpoint copies them.
    }
    this.db.close();
  }
}

/** How long toWal waits between tries, in milliseconds; it tries for BUSY_TIMEOUT_MS in all. */
const WAL_RETRY_MS = 10;

/**
 * Put the file in WAL mode (a mode the file keeps: once one process set it, the others find it set). The
 * change needs the file to itself for a moment, and SQLite answers SQLITE_BUSY at once, without waiting
 * through the busy timeout, when another process reads it meanwhile (two first opens of a new file at once:
 * one reads the file's tables while the other changes its mode). So the change is tried again after a short
 * blocking wait (Atomics.wait: open is synchronous, and no other work is due on this thread while it opens),
 * for BUSY_TIMEOUT_MS in all, then fails as any write that waited that long.
 */
function toWal(db: Database, location: string): void {
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (let waited = 0; ; waited += WAL_RETRY_MS) {
    try {
      const mode = db.prepare('PRAGMA journal_mode').raw().get() as [string];
      if (mode[0] !== 'wal') db.exec('PRAGMA journal_mode = WAL');
      return;
    } catch (err) {
      if (sqliteCode(err) !== 'SQLITE_BUSY') throw err;
      if (waited >= BUSY_TIMEOUT_MS) {
        throw new CardboardError(`The mirror ${location} stayed busy for ${BUSY_TIMEOUT_MS / 1000}s: another process is writing to it.`, { hint: 'Run again when the other pull or import is done.', cause: err });
      }
      Atomics.wait(pause, 0, 0, WAL_RETRY_MS);
    }
  }
}

/** Bring the file in `db` to MIRROR_FORMAT in one transaction, writing the board it holds into a new one. */
function migrate(db: Database, board: MirrorBoard, location: string): void {
  inWrite(db, location, () => {
    // Another process may have made or migrated it since it was read.
    const from = checkMirror(db, board, location);
    for (let format = from; format < MIRROR_FORMAT; format++) db.exec(MIGRATIONS[format]!);
    const set = db.prepare('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value');
    set.run('format', String(MIRROR_FORMAT));
    if (from === 0) {
      set.run('server', board.server);
      set.run('board_id', board.id);
      set.run('base_url', board.baseUrl);
      set.run('seq', '0');
    }
  });
}
