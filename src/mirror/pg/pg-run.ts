// The card writes of one transaction of deliveries or own writes on PostgreSQL: the rules of CardRun
// (card-run.ts) with the server's round trips in mind. A batch reads every row it touches, the board's
// sequence number and last place in one statement, walks its deliveries in memory, and writes what it did in
// one statement (two when it deletes: a card deleted and made again in one batch leaves its row before the
// new one comes), each taking its rows as arrays (unnest): the listener's batch costs the same few round
// trips whatever its size.
import type pg from 'pg';
import type { Card } from '../../spec-types.js';
import { jsonbText, noNul } from './text.js';

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
    private readonly client: pg.Client,
    private readonly board: number,
    private seq: number,
    private nextPos: number,
    /** Whether any tombstone of the board was there when the run began. */
    private readonly tombstones: boolean,
  ) {}

  /** Begin a run in an open write transaction; `ids`: the cards it will touch, read in one statement. */
  static async begin(client: pg.Client, board: number, touched: readonly string[]): Promise<PgRun> {
    const ids = [...new Set(touched)];
    const keys = ids.map(noNul);
    const { rows } = await client.query<[number, number | null, boolean, number | null, string | null]>({
      text: `SELECT b.seq, (SELECT max(pos) FROM cards WHERE board = $1), EXISTS (SELECT 1 FROM tombstones WHERE board = $1), i.n, c.body_text
             FROM boards b LEFT JOIN unnest($2::text[]) WITH ORDINALITY AS i(id, n) ON true
             LEFT JOIN cards c ON c.board = $1 AND c._id = i.id
             WHERE b.board = $1`,
      values: [board, keys],
      rowMode: 'array',
    });
    const first = rows[0];
    if (first === undefined) throw new Error(`board ${board} has no row in the mirror's boards`);
    const run = new PgRun(client, board, first[0], (first[1] ?? 0) + 1, first[2]);
    for (const id of ids) run.entries.set(id, { held: false, dropped: false, card: undefined, text: undefined });
    for (const [, , , n, text] of rows) {
      if (n === null || text === null) continue;
      const entry = run.entries.get(ids[n - 1]!)!;
      entry.held = true;
      entry.text = text;
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

  /** Write what the run did, and `logged` into `deliveries`: deleted rows, kept cards, tombstones, the last sequence number. */
  async end(logged: readonly LoggedDelivery[] = []): Promise<void> {
    const drop: string[] = [];
    const tombIds: string[] = [];
    const tombSeqs: number[] = [];
    const keep: [string[], string[], string[], number[], number[], string[]] = [[], [], [], [], [], []];
    for (const [id, e] of this.entries) {
      if (e.dropped) drop.push(noNul(id));
      if (e.tomb !== undefined) {
        tombIds.push(noNul(id));
        tombSeqs.push(e.tomb);
      }
      if (e.seq === undefined) continue;
      const text = JSON.stringify(e.card);
      // A card the table still holds keeps its place (the upsert leaves `pos` alone): 0 is not used.
      [noNul(id), jsonbText(text), text, e.pos ?? 0, e.seq, e.at!].forEach((v, i) => (keep[i] as unknown[]).push(v));
    }
    const cleared = this.tombstones ? keep[0] : [];
    if (drop.length > 0 || tombIds.length > 0 || cleared.length > 0) {
      await this.client.query(
        `WITH d AS (DELETE FROM cards WHERE board = $1 AND _id = ANY($2::text[])),
              t AS (INSERT INTO tombstones (board, _id, seq) SELECT $1, u.id, u.seq FROM unnest($3::text[], $4::bigint[]) AS u(id, seq)
                    ON CONFLICT (board, _id) DO UPDATE SET seq = excluded.seq),
              c AS (DELETE FROM tombstones WHERE board = $1 AND _id = ANY($5::text[]))
         SELECT 1`,
        [this.board, drop, tombIds, tombSeqs, cleared],
      );
    }
    const log = columns(logged, 7);
    await this.client.query(
      `WITH k AS (INSERT INTO cards (board, _id, body, body_text, pos, pulled, missed, delivered_seq, updated_at)
                  SELECT $1, u.id, u.body::jsonb, u.text, u.pos, NULL, 0, u.seq, u.at
                  FROM unnest($2::text[], $3::text[], $4::text[], $5::float8[], $6::bigint[], $7::text[]) AS u(id, body, text, pos, seq, at)
                  ON CONFLICT (board, _id) DO UPDATE SET body = excluded.body, body_text = excluded.body_text, missed = 0,
                    delivered_seq = excluded.delivered_seq, updated_at = excluded.updated_at),
            l AS (INSERT INTO deliveries (board, seq, received_at, kind, name, card_id, body, body_cut)
                  SELECT $1, u.* FROM unnest($8::bigint[], $9::text[], $10::text[], $11::text[], $12::text[], $13::text[], $14::bool[]) AS u)
       UPDATE boards SET seq = $15 WHERE board = $1`,
      [this.board, ...keep, ...log, this.seq],
    );
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
