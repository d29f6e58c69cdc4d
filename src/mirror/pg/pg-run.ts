// The card writes of one transaction of deliveries or own writes on PostgreSQL: the rules of CardRun
// (card-run.ts) with the server's round trips in mind. A batch reads every row it touches, the board's
// sequence number and last place in one statement (readSql), walks its deliveries in memory, and writes what
// it did in one statement (two when it deletes: a card deleted and made again in one batch leaves its row
// before the new one comes), each taking its rows as arrays (unnest): with writeBatch (migrations.ts), the
// listener's batch costs two round trips to the server whatever its size.
import type { Card } from '../../spec-types.js';
import { jsonbText, noNul, sqlArray, sqlValue } from './text.js';

/** One card a run touched or read (CardRun's Entry). */
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

/** A delivery as `deliveries` logs it: seq, received_at, kind, name, card_id, body, body_cut. */
export type LoggedDelivery = [number, string, string, string | null, string | null, string | null, boolean];

/**
 * The cards of one write transaction, each read at most once and written once at the end, with the
 * transaction's sequence numbers: each delivery or own write takes the next (`next()`), the last is saved.
 */
export class PgRun {
  private readonly entries = new Map<string, Entry>();

  private constructor(
    private readonly board: number,
    private seq: number,
    private nextPos: number,
    /** Whether any tombstone of the board was there when the run began. */
    private readonly tombstones: boolean,
  ) {}

  /** The statement that reads what a run on `board` touching `ids` begins with: the board's row first (its _id NULL), then the rows held. */
  static readSql(board: number, ids: readonly string[]): string {
    return `SELECT NULL::text, NULL::text, b.seq, (SELECT max(pos) FROM cards WHERE board = ${board}), EXISTS (SELECT 1 FROM tombstones WHERE board = ${board})
            FROM boards b WHERE b.board = ${board}
            UNION ALL
            SELECT c._id, c.body_text, NULL, NULL, NULL FROM cards c WHERE c.board = ${board} AND c._id = ANY(${sqlArray(ids, 'text')})`;
  }

  /** Begin a run in an open write transaction, from the rows of readSql(board, touched). */
  static from(board: number, touched: readonly string[], rows: readonly unknown[][]): PgRun {
    const ids = [...new Set(touched)];
    const head = rows.find((r) => r[0] === null) as [null, null, number, number | null, boolean] | undefined;
    if (head === undefined) throw new Error(`board ${board} has no row in the mirror's boards`);
    const run = new PgRun(board, head[2], (head[3] ?? 0) + 1, head[4]);
    const byKey = new Map(ids.map((id) => [noNul(id), id]));
    for (const id of ids) run.entries.set(id, { held: false, dropped: false, card: undefined, text: undefined });
    for (const [key, text] of rows as [string | null, string | null][]) {
      if (key === null) continue;
      const entry = run.entries.get(byKey.get(key)!)!;
      entry.held = true;
      entry.text = text!;
    }
    return run;
  }

  /** The sequence number of the next delivery or write. */
  next(): number {
    return ++this.seq;
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
    if (!exists && entry.pos === undefined) entry.pos = this.nextPos++;
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

  /** The statements that write what the run did, and `logged` into `deliveries`: deleted rows, kept cards, tombstones, the last sequence number. */
  endSql(logged: readonly LoggedDelivery[] = []): string {
    const drop: string[] = [];
    const tombIds: string[] = [];
    const tombSeqs: number[] = [];
    const keep: [string[], string[], string[], number[], number[], string[]] = [[], [], [], [], [], []];
    for (const [id, e] of this.entries) {
      if (e.dropped) drop.push(id);
      if (e.tomb !== undefined) {
        tombIds.push(id);
        tombSeqs.push(e.tomb);
      }
      if (e.seq === undefined) continue;
      const text = JSON.stringify(e.card);
      keep[0].push(id);
      keep[1].push(jsonbText(text));
      keep[2].push(text);
      // A card the table still holds keeps its place (the upsert leaves `pos` alone): 0 is not used.
      keep[3].push(e.pos ?? 0);
      keep[4].push(e.seq);
      keep[5].push(e.at!);
    }
    const b = this.board;
    const cleared = this.tombstones ? keep[0] : [];
    const out: string[] = [];
    if (drop.length > 0 || tombIds.length > 0 || cleared.length > 0) {
      out.push(`WITH d AS (DELETE FROM cards WHERE board = ${b} AND _id = ANY(${sqlArray(drop, 'text')})),
                     t AS (INSERT INTO tombstones (board, _id, seq) SELECT ${b}, u.id, u.seq FROM unnest(${sqlArray(tombIds, 'text')}, ${sqlArray(tombSeqs, 'bigint')}) AS u(id, seq)
                           ON CONFLICT (board, _id) DO UPDATE SET seq = excluded.seq)
                DELETE FROM tombstones WHERE board = ${b} AND _id = ANY(${sqlArray(cleared, 'text')})`);
    }
    const [id, body, text, pos, seq, at] = keep;
    const log = columns(logged, 7);
    const types = ['bigint', 'text', 'text', 'text', 'text', 'text', 'boolean'];
    out.push(`WITH k AS (INSERT INTO cards (board, _id, body, body_text, pos, pulled, missed, delivered_seq, updated_at)
                         SELECT ${b}, u.id, u.body::jsonb, u.text, u.pos, NULL, 0, u.seq, u.at
                         FROM unnest(${sqlArray(id, 'text')}, ${sqlArray(body, 'text')}, ${sqlArray(text, 'text')}, ${sqlArray(pos, 'float8')}, ${sqlArray(seq, 'bigint')}, ${sqlArray(at, 'text')})
                           AS u(id, body, text, pos, seq, at)
                         ON CONFLICT (board, _id) DO UPDATE SET body = excluded.body, body_text = excluded.body_text, missed = 0,
                           delivered_seq = excluded.delivered_seq, updated_at = excluded.updated_at),
                   l AS (INSERT INTO deliveries (board, seq, received_at, kind, name, card_id, body, body_cut)
                         SELECT ${b}, u.* FROM unnest(${log.map((values, i) => sqlArray(values as (string | number | boolean | null)[], types[i]!)).join(', ')}) AS u)
              UPDATE boards SET seq = ${sqlValue(this.seq)} WHERE board = ${b}`);
    return out.join(';\n');
  }

  private entry(id: string): Entry {
    const entry = this.entries.get(id);
    if (entry === undefined) throw new Error(`card ${id} was not read at the start of the run`);
    return entry;
  }
}

/** Rows of `width` values as `width` arrays, one per column (what unnest takes). */
export function columns(rows: readonly (readonly unknown[])[], width: number): unknown[][] {
  const out: unknown[][] = Array.from({ length: width }, () => []);
  for (const row of rows) row.forEach((v, i) => out[i]!.push(v));
  return out;
}
