// What passes between `cardboard query` and the thread that runs its statement (thread.ts, worker.ts): the
// job and the replies; errors travel as data (thread-errors.ts).
import type { MirrorPlace } from '../../mirror/open.js';
import type { MirrorBoard } from '../../mirror/types.js';
import type { WireError } from '../../thread-errors.js';

/** What the thread runs: the statement over the mirror at `place`, which must hold `board`. */
export interface StatementJob {
  place: MirrorPlace;
  board: MirrorBoard;
  sql: string;
  /** Rows wanted at most (a terminal table's, which stops at a count): the thread runs SQLite no further. */
  limit?: number;
  /**
   * One Int32: the batches the main thread has written so far, counted by it. The thread compares it with
   * the batches it sent, to wait when enough are waiting and to send at once when none is.
   */
  taken: SharedArrayBuffer;
}

/** What the thread sends: the columns first, then batches of rows, then the end or an error. */
export type Reply = { type: 'columns'; columns: string[] } | { type: 'rows'; rows: unknown[][] } | { type: 'end' } | { type: 'error'; error: WireError };
