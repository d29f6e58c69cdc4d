// Rows in input order (--concurrency 1, the default): a row talks to the server (waits for an earlier
// run's requests to land, sends, retries, reads the board to settle a try) only once every row read
// before it has ended, so the card of row N is answered before row N+1's first POST leaves, across
// retries and re-checks: the board gets the file's order. The sending slots alone cannot promise it: a
// row waiting without its slot (a board re-check, the Update Mode probe, a verdict) lets later rows go.
//
// The reader reads the next row only once the rows read so far have ended, with one exception: a row
// waiting for its verdict (resume.ts) is decided by rows read after it (a shift of lines), so while the
// oldest row waits for one the reader goes on; the rows it reads are prepared and matched, and wait here
// for their turn. The verdict comes within SHIFT_WINDOW rows, which bounds what is read ahead.
import type { Row, RowPhase } from './row-life.js';

/** The phases in which a row talks to the server, or waits for an earlier run's requests to land: they need the turn. */
const SERVER_PHASES: ReadonlySet<RowPhase['at']> = new Set(['landing', 'sending', 'checking']);

/** The rows read and not ended, oldest first: the oldest one has the turn. */
export class InOrder {
  /** Rows in reading order; those before `head` have ended. */
  private rows: Row[] = [];
  private head = 0;
  /** Rows ended while an older one was still alive (they needed no turn: skipped, rejected, unchanged...). */
  private readonly ended = new Set<Row>();
  /** The rows waiting for their turn, each woken when it becomes the oldest. */
  private readonly waiting = new Map<Row, () => void>();
  /** The reader, parked in readerMayGo() until it may read the next row. */
  private wakeReader: (() => void) | undefined;

  /** A row was read (rows are added in reading order). */
  add(row: Row): void {
    this.rows.push(row);
  }

  /** Undefined when `row` may go on (its phase needs no turn, or it has the turn: every row read before it has ended), else the wait for its turn. */
  turn(row: Row): Promise<void> | undefined {
    if (!SERVER_PHASES.has(row.phase.at) || this.rows[this.head] === row) return undefined;
    return new Promise<void>((resolve) => this.waiting.set(row, resolve));
  }

  /** A row ended, whatever its end: the next alive row gets the turn. */
  end(row: Row): void {
    if (this.rows[this.head] !== row) {
      this.ended.add(row);
      return;
    }
    this.head++;
    while (this.head < this.rows.length && this.ended.delete(this.rows[this.head]!)) this.head++;
    // Drop the ended rows from the front once they are the larger part (amortized O(1) per row).
    if (this.head > 64 && this.head * 2 > this.rows.length) {
      this.rows = this.rows.slice(this.head);
      this.head = 0;
    }
    const next = this.rows[this.head];
    const wake = next && this.waiting.get(next);
    if (wake) {
      this.waiting.delete(next!);
      wake();
    }
    this.changed();
  }

  /** A row moved to another phase: the reader may be free to go. */
  changed(): void {
    if (this.wakeReader !== undefined && this.readerFree()) {
      const wake = this.wakeReader;
      this.wakeReader = undefined;
      wake();
    }
  }

  /** Undefined when the reader may read the next row now, else the wait until it may. */
  readerMayGo(): Promise<void> | undefined {
    if (this.readerFree()) return undefined;
    return new Promise<void>((resolve) => (this.wakeReader = resolve));
  }

  /** No row is alive, or the oldest waits for a verdict that rows not read yet may decide. */
  private readerFree(): boolean {
    const oldest = this.rows[this.head];
    return oldest === undefined || oldest.phase.at === 'deciding';
  }
}
