// The card writes of one transaction of deliveries or own writes (sqlite-store.ts), held in memory while the
// transaction walks them in order and written at its end in a handful of statements whatever its size: one
// read of the rows it touches, one write of the cards it keeps, one of those it deletes. A listener under load
// applies a batch of twenty or more deliveries at a time, and a statement costs about as much as the row it
// writes: one statement a row would double the cost of the batch. The walk itself (RunCards) is the
// engines' own: the mirror on PostgreSQL (pg/pg-run.ts) reads and writes its way around the same one.
import { isDeepStrictEqual } from 'node:util';
import type Libsql from 'libsql';
import { CardboardError } from '../errors.js';
import type { Card } from '../spec-types.js';
import type { MirrorChange, MirrorDelivery } from './types.js';

type Database = Libsql.Database;
type Statement = Libsql.Statement;

/** The longest text of an unplaced delivery kept in `deliveries.body`, in bytes; a longer one is cut and `body_cut` set. */
export const UNPLACED_BODY_MAX = 64 * 1024;

/** The first `max` bytes of `text` in UTF-8, cut before a character, never inside one. */
export function cutUtf8(text: string, max: number): { text: string; cut: boolean } {
  const bytes = Buffer.from(text);
  if (bytes.length <= max) return { text, cut: false };
  let end = max;
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return { text: bytes.subarray(0, end).toString(), cut: true };
}

/** The card's id, which every card the mirror keeps has. */
export function idOf(card: Card): string {
  if (typeof card._id !== 'string') throw new CardboardError('A card without an _id cannot be kept in the mirror.');
  return card._id;
}

/** The cards a batch of deliveries touches: the ids its run reads at its start. */
export function touchedBy(deliveries: readonly MirrorDelivery[]): string[] {
  return deliveries.flatMap((d) => (d.kind === 'card' ? [idOf(d.card)] : d.kind === 'deleted' ? [d.id] : []));
}

/** One delivery of a batch as the table `deliveries` logs it (each engine writes it its own way). */
export interface LoggedDelivery {
  seq: number;
  receivedAt: string;
  kind: MirrorDelivery['kind'];
  name?: string;
  cardId?: string;
  /** An unplaced delivery's text, cut at UNPLACED_BODY_MAX. */
  body?: { text: string; cut: boolean };
}

/** A change of `id` from `before` to `after`, or undefined when the card is the same (compared parsed). */
function changeOf(id: string, before: Card | undefined, after: Card): MirrorChange | undefined {
  if (isDeepStrictEqual(before, after)) return undefined;
  return before === undefined ? { id, after } : { id, before, after };
}

/**
 * Rows one multi-row statement takes at most: 64 rows of 7 values stay far below SQLite's limit on the values
 * one statement binds (999 in the oldest builds), and a larger batch runs the statement once per 64 rows.
 */
const ROWS_PER_STATEMENT = 64;

/**
 * A statement of the form `head VALUES row, row, … tail`, prepared once for each count of rows it is run
 * with (at most ROWS_PER_STATEMENT of them, so a connection prepares at most that many).
 */
export class RowsStatement {
  private readonly byCount = new Map<number, Statement>();

  constructor(
    private readonly db: Database,
    private readonly head: string,
    private readonly row: string,
    private readonly tail = '',
  ) {}

  /** Run it over `rows`, each the values of one row in the order `row` binds them. */
  run(rows: readonly (readonly unknown[])[]): void {
    for (let at = 0; at < rows.length; at += ROWS_PER_STATEMENT) {
      const chunk = rows.slice(at, at + ROWS_PER_STATEMENT);
      this.of(chunk.length).run(chunk.flat());
    }
  }

  private of(count: number): Statement {
    let stmt = this.byCount.get(count);
    if (stmt === undefined) {
      stmt = this.db.prepare(`${this.head} VALUES ${Array<string>(count).fill(this.row).join(', ')}${this.tail}`);
      this.byCount.set(count, stmt);
    }
    return stmt;
  }
}

/** The statements a run uses, prepared once per connection (runStatements). */
export interface RunStatements {
  seq: Statement;
  setSeq: Statement;
  lastPos: Statement;
  anyTombstone: Statement;
  rows: Statement;
  deleteCards: Statement;
  clearTombstones: Statement;
  setTombstone: Statement;
  keepCards: RowsStatement;
  logDeliveries: RowsStatement;
}

/** Prepare the statements of a run on `db`. */
export function runStatements(db: Database): RunStatements {
  const ids = 'SELECT value FROM json_each(?)';
  return {
    seq: db.prepare("SELECT value FROM meta WHERE key = 'seq'").raw(true),
    setSeq: db.prepare("INSERT INTO meta (key, value) VALUES ('seq', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value"),
    lastPos: db.prepare('SELECT max(pos) FROM cards').raw(true),
    anyTombstone: db.prepare('SELECT 1 FROM tombstones LIMIT 1').raw(true),
    // The ids go in as one JSON array: any count of them, one statement.
    rows: db.prepare(`SELECT _id, body FROM cards WHERE _id IN (${ids})`).raw(true),
    deleteCards: db.prepare(`DELETE FROM cards WHERE _id IN (${ids})`),
    clearTombstones: db.prepare(`DELETE FROM tombstones WHERE _id IN (${ids})`),
    setTombstone: db.prepare('INSERT INTO tombstones (_id, seq) VALUES (?, ?) ON CONFLICT (_id) DO UPDATE SET seq = excluded.seq'),
    // A card the table holds keeps its place and its last pull; a new one takes the place given.
    keepCards: new RowsStatement(
      db,
      'INSERT INTO cards (_id, body, pos, pulled, missed, delivered_seq, updated_at)',
      '(?, ?, ?, NULL, 0, ?, ?)',
      ' ON CONFLICT (_id) DO UPDATE SET body = excluded.body, missed = 0, delivered_seq = excluded.delivered_seq, updated_at = excluded.updated_at',
    ),
    logDeliveries: new RowsStatement(db, 'INSERT INTO deliveries (seq, received_at, kind, name, card_id, body, body_cut)', '(?, ?, ?, ?, ?, ?, ?)'),
  };
}

/** One card a run touched or read. */
interface Entry {
  /** The table held a row for it when the run began. */
  held: boolean;
  /** That row was deleted during the run (and a card made again after it takes a new row, at a new place). */
  dropped: boolean;
  /** The card now, or undefined when there is none; `text` stands for it until it is first read. */
  card: Card | undefined;
  text: string | undefined;
  /** A delivery or write of this run made it `card`: the last one's sequence number and time. */
  seq?: number;
  at?: string;
  /** Its place on the board, for a card this run made. */
  pos?: number;
  /** The sequence number of the delete that ended it, when no card came after. */
  tomb?: number;
}

/** What a run did, for its engine to write: rows to delete, tombstones to set, cards to keep. */
export interface RunOutcome {
  /** Cards whose row the run deleted. */
  drop: string[];
  /** Cards a delete ended, with its sequence number. */
  tombs: [id: string, seq: number][];
  /** Cards a delivery or write made: the JSON text, the place of one new to the table (0 for one it holds), the sequence number and time. */
  keep: [id: string, text: string, pos: number, seq: number, at: string][];
}

/**
 * The cards of one write transaction, each read at most once and written once at the end, with the
 * transaction's sequence numbers: each delivery or own write takes the next (`next()`), the last is saved.
 * Deliveries are applied in order, so the end state of each card is the one the last of them left. What the
 * run reads and writes is its engine's (CardRun for SQLite, PgRun for PostgreSQL); this is the walk.
 */
export abstract class RunCards {
  private readonly entries = new Map<string, Entry>();

  /**
   * `seq`: the last sequence number used; `tombstones`: whether any tombstone was there when the run began
   * (none, most of the time: no other process writes meanwhile); `ids`: the cards it will touch.
   */
  protected constructor(
    private seq: number,
    protected readonly tombstones: boolean,
    ids: readonly string[],
  ) {
    for (const id of ids) this.entries.set(id, { held: false, dropped: false, card: undefined, text: undefined });
  }

  /** The table holds card `id` (one of the run's), as `text`. */
  protected hold(id: string, text: string): void {
    const entry = this.entry(id);
    entry.held = true;
    entry.text = text;
  }

  /** The next place at the end of the board: after every card the table holds, and every card made before in this run. */
  protected abstract place(): number;

  /** The sequence number of the next delivery or write. */
  next(): number {
    return ++this.seq;
  }

  /** The last sequence number the run took. */
  protected lastSeq(): number {
    return this.seq;
  }

  /** The card `id` as it is now (one of the ids the run began with). */
  card(id: string): Card | undefined {
    const entry = this.entry(id);
    if (entry.text !== undefined) {
      entry.card = JSON.parse(entry.text) as Card;
      entry.text = undefined;
    }
    return entry.card;
  }

  /** The card `id` is now `card`, by the current delivery or write at `at`. */
  put(id: string, card: Card, at: string): void {
    const entry = this.entry(id);
    const exists = entry.card !== undefined || entry.text !== undefined;
    if (!exists && entry.pos === undefined) entry.pos = this.place();
    entry.card = card;
    entry.text = undefined;
    entry.seq = this.seq;
    entry.at = at;
    entry.tomb = undefined;
  }

  /** The card `id` is deleted by the current delivery: it leaves a tombstone. */
  remove(id: string): void {
    const entry = this.entry(id);
    if (entry.held) entry.dropped = true;
    entry.card = undefined;
    entry.text = undefined;
    entry.pos = undefined;
    entry.seq = undefined;
    entry.tomb = this.seq;
  }

  /**
   * Apply verified deliveries in their order: a card's keys merged into the card held (a server may send only
   * what changed), a delete removing it; the changes they made, and each delivery as `deliveries` logs it.
   */
  applyDeliveries(deliveries: readonly MirrorDelivery[]): { changes: MirrorChange[]; logged: LoggedDelivery[] } {
    const changes: MirrorChange[] = [];
    const logged: LoggedDelivery[] = [];
    for (const d of deliveries) {
      const entry: LoggedDelivery = { seq: this.next(), receivedAt: d.receivedAt, kind: d.kind, ...(d.name === undefined ? {} : { name: d.name }) };
      if (d.kind === 'card') {
        entry.cardId = d.card._id;
        const before = this.card(entry.cardId);
        // Spread, not Object.assign: a key named __proto__ is the card's own data, never its prototype.
        const after = before === undefined ? d.card : { ...before, ...d.card };
        this.put(entry.cardId, after, d.receivedAt);
        const change = changeOf(entry.cardId, before, after);
        if (change) changes.push(change);
      } else if (d.kind === 'deleted') {
        entry.cardId = d.id;
        const before = this.card(d.id);
        if (before !== undefined) changes.push({ id: d.id, before });
        this.remove(d.id);
      } else {
        if (d.cardId !== undefined) entry.cardId = d.cardId;
        if (d.kind === 'unplaced') entry.body = cutUtf8(d.body, UNPLACED_BODY_MAX);
      }
      logged.push(entry);
    }
    return { changes, logged };
  }

  /** Cards the service returned for this client's own writes, kept whole at `now`; the changes they made. */
  applyWrites(cards: readonly Card[], now: string): MirrorChange[] {
    const changes: MirrorChange[] = [];
    for (const card of cards) {
      this.next();
      const before = this.card(card._id);
      this.put(card._id, card, now);
      const change = changeOf(card._id, before, card);
      if (change) changes.push(change);
    }
    return changes;
  }

  /** What the run did. */
  protected outcome(): RunOutcome {
    const out: RunOutcome = { drop: [], tombs: [], keep: [] };
    for (const [id, e] of this.entries) {
      if (e.dropped) out.drop.push(id);
      if (e.tomb !== undefined) out.tombs.push([id, e.tomb]);
      // A card the table still holds keeps its place (the upsert leaves `pos` alone): 0 is not used.
      if (e.seq !== undefined) out.keep.push([id, JSON.stringify(e.card), e.pos ?? 0, e.seq, e.at!]);
    }
    return out;
  }

  private entry(id: string): Entry {
    const entry = this.entries.get(id);
    if (entry === undefined) throw new Error(`card ${id} was not read at the start of the run`);
    return entry;
  }
}

/** A run on a SQLite mirror (sqlite-store.ts), with the statements of its connection. */
export class CardRun extends RunCards {
  private nextPos: number | undefined;

  /** Begin a run in an open write transaction; `ids`: the cards it will touch, read in one statement. */
  constructor(
    private readonly s: RunStatements,
    ids: readonly string[],
  ) {
    const seq = s.seq.get() as [string] | undefined;
    super(seq === undefined ? 0 : Number(seq[0]), s.anyTombstone.get() !== undefined, ids);
    if (ids.length === 0) return;
    for (const [id, body] of s.rows.all(JSON.stringify(ids)) as [string, string][]) this.hold(id, body);
  }

  /** Write what the run did: deleted rows, kept cards, tombstones, and the last sequence number. */
  end(): void {
    const { drop, tombs, keep } = this.outcome();
    for (const [id, seq] of tombs) this.s.setTombstone.run(id, seq);
    if (drop.length > 0) this.s.deleteCards.run(JSON.stringify(drop));
    this.s.keepCards.run(keep);
    if (this.tombstones && keep.length > 0) this.s.clearTombstones.run(JSON.stringify(keep.map((k) => k[0])));
    this.s.setSeq.run(String(this.lastSeq()));
  }

  protected place(): number {
    this.nextPos ??= ((this.s.lastPos.get() as [number | null])[0] ?? 0) + 1;
    return this.nextPos++;
  }
}
