// The thread that runs `cardboard query`'s statement (started by thread.ts): it opens the mirror read-only,
// runs the statement as runStatement does (the same refusals, the same errors), and sends the columns, then
// the rows in batches, then the end or the error (wire.ts). SQLite computes here, synchronously; the main
// thread's event loop stays free, so a signal is heard however long a statement takes.
import { type MessagePort, parentPort, workerData } from 'node:worker_threads';
import { openReaderAt } from '../../mirror/open.js';
import type { MirrorReader } from '../../mirror/types.js';
import { runStatement } from './sql.js';
import { toWire } from '../../thread-errors.js';
import type { Reply, StatementJob } from './wire.js';

/** Rows in a batch at most: one message per this many rows (a message per row would cost more than the row). */
const BATCH_ROWS = 1000;

/** Batches sent and not yet written by the main thread, at most: one being written, one ready. Memory stays flat. */
const MAX_WAITING = 2;

/** How long rows wait, at most, while the main thread has nothing to write: a statement that finds them slowly still streams. */
const LATENCY_MS = 20;

/**
 * Run `job` and send what it gives on `port`. A batch goes when it is full, or when the main thread has
 * written every batch sent (it waits) and the batch has waited LATENCY_MS: sent at once, rows would go one
 * by one whenever the main thread writes faster than SQLite finds them, at a message each. When MAX_WAITING
 * batches wait, the thread waits for the main thread's word that it took one (any message).
 */
async function serve(port: MessagePort, job: StatementJob): Promise<void> {
  const taken = new Int32Array(job.taken);
  const send = (reply: Reply) => port.postMessage(reply);
  let sent = 0;
  let reader: MirrorReader | undefined;
  try {
    reader = openReaderAt(job.place, job.board);
    const result = runStatement(reader, job.sql);
    send({ type: 'columns', columns: result.columns });
    let rows: unknown[][] = [];
    let since = performance.now();
    let count = 0;
    for (const row of result.rows) {
      rows.push(row);
      if (++count === job.limit) break;
      if (rows.length < BATCH_ROWS && (sent > Atomics.load(taken, 0) || performance.now() - since < LATENCY_MS)) continue;
      // The main thread adds to `taken` before it says so: a word that came before this check is counted in it.
      while (sent - Atomics.load(taken, 0) >= MAX_WAITING) await new Promise((resolve) => port.once('message', resolve));
      send({ type: 'rows', rows });
      sent++;
      rows = [];
      since = performance.now();
    }
    if (rows.length > 0) send({ type: 'rows', rows });
    send({ type: 'end' });
  } catch (err) {
    send({ type: 'error', error: toWire(err) });
  } finally {
    reader?.close();
  }
}

if (parentPort !== null) void serve(parentPort, workerData as StatementJob);
