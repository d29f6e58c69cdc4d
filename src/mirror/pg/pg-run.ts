// The card writes of one transaction of deliveries or own writes on PostgreSQL: the rules of CardRun
// (card-run.ts) with the server's round trips in mind. A batch reads every row it touches, the board's
// sequence number and last place in one statement (readSql), walks its deliveries in memory, and writes what
// it did in one statement (two when it deletes: a card deleted and made again in one batch leaves its row
// before the new one comes), each taking its rows as arrays (unnest): with writeBatch (migrations.ts), the
// listener's batch costs two round trips to the server whatever its size.
import { RunCards } from '../card-run.js';
import { jsonbText, noNul, sqlArray, sqlValue } from './text.js';

/** A delivery as `deliveries` logs it: seq, received_at, kind, name, card_id, body, body_cut. */
export type DeliveryRow = [number, string, string, string | null, string | null, string | null, boolean];

/** A run (RunCards in card-run.ts) on a PostgreSQL mirror: what it reads and the statements that write what it did. */
export class PgRun extends RunCards {
  private constructor(
    private readonly board: number,
    seq: number,
    private nextPos: number,
    tombstones: boolean,
    ids: readonly string[],
  ) {
    super(seq, tombstones, ids);
  }

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
    const run = new PgRun(board, head[2], (head[3] ?? 0) + 1, head[4], ids);
    // The table's ids are the run's with a NUL as U+FFFD (text.ts).
    const byKey = new Map(ids.map((id) => [noNul(id), id]));
    for (const [key, text] of rows as [string | null, string][]) if (key !== null) run.hold(byKey.get(key)!, text);
    return run;
  }

  protected place(): number {
    return this.nextPos++;
  }

  /** The statements that write what the run did, and `logged` into `deliveries`: deleted rows, kept cards, tombstones, the last sequence number. */
  endSql(logged: readonly DeliveryRow[] = []): string {
    const { drop, tombs, keep } = this.outcome();
    const b = this.board;
    const cleared = this.tombstones ? keep.map((k) => k[0]) : [];
    const out: string[] = [];
    if (drop.length > 0 || tombs.length > 0 || cleared.length > 0) {
      const [tombIds, tombSeqs] = columns(tombs, 2);
      out.push(`WITH d AS (DELETE FROM cards WHERE board = ${b} AND _id = ANY(${sqlArray(drop, 'text')})),
                     t AS (INSERT INTO tombstones (board, _id, seq) SELECT ${b}, u.id, u.seq FROM unnest(${unnestOf([tombIds!, tombSeqs!], ['text', 'bigint'])}) AS u(id, seq)
                           ON CONFLICT (board, _id) DO UPDATE SET seq = excluded.seq)
                DELETE FROM tombstones WHERE board = ${b} AND _id = ANY(${sqlArray(cleared, 'text')})`);
    }
    const [id, text, pos, seq, at] = columns(keep, 5) as [string[], string[], number[], number[], string[]];
    out.push(`WITH k AS (INSERT INTO cards (board, _id, body, body_text, pos, pulled, missed, delivered_seq, updated_at)
                         SELECT ${b}, u.id, u.body::jsonb, u.text, u.pos, NULL, 0, u.seq, u.at
                         FROM unnest(${unnestOf([id, text.map(jsonbText), text, pos, seq, at], ['text', 'text', 'text', 'float8', 'bigint', 'text'])})
                           AS u(id, body, text, pos, seq, at)
                         ON CONFLICT (board, _id) DO UPDATE SET body = excluded.body, body_text = excluded.body_text, missed = 0,
                           delivered_seq = excluded.delivered_seq, updated_at = excluded.updated_at),
                   l AS (INSERT INTO deliveries (board, seq, received_at, kind, name, card_id, body, body_cut)
                         SELECT ${b}, u.* FROM unnest(${unnestOf(columns(logged, 7), ['bigint', 'text', 'text', 'text', 'text', 'text', 'boolean'])}) AS u)
              UPDATE boards SET seq = ${sqlValue(this.lastSeq())} WHERE board = ${b}`);
    return out.join(';\n');
  }
}

/** The arguments of unnest: each column of values as an SQL array of its type. */
export function unnestOf(values: readonly (readonly unknown[])[], types: readonly string[]): string {
  return values.map((column, i) => sqlArray(column as (string | number | boolean | null)[], types[i]!)).join(', ');
}

/** Rows of `width` values as `width` arrays, one per column (what unnest takes). */
export function columns(rows: readonly (readonly unknown[])[], width: number): unknown[][] {
  const out: unknown[][] = Array.from({ length: width }, () => []);
  for (const row of rows) row.forEach((v, i) => out[i]!.push(v));
  return out;
}
