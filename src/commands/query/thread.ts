// `cardboard query` runs its statement in a worker thread (worker.ts). SQLite computes synchronously, and a
// statement may compute for minutes before its first row (an unbounded recursive CTE, a huge join): on the
// main thread it would hold the event loop, and with it Ctrl-C and SIGTERM, until it returned. Here the main
// thread only writes the rows the worker sends and waits for the next batch, so a signal is heard at once;
// the run then ends by it (interrupt.ts exitBySignal), which ends the process with its threads even while
// the worker is still inside SQLite (a thread in native code cannot be terminated; it stops when SQLite
// returns).
import { Worker } from 'node:worker_threads';
import { CancelledError, CardboardError } from '../../errors.js';
import { whenAborted } from '../../interrupt.js';
import type { MirrorPlace } from '../../mirror/open.js';
import type { MirrorBoard } from '../../mirror/types.js';
import { fromWire } from '../../thread-errors.js';
import type { Reply, StatementJob } from './wire.js';

/** A statement running in its thread: its columns, then its rows. */
export interface StatementThread {
  readonly columns: string[];
  /** The rows in batches, in order; the worker sends more as these are taken. Ends early with the error of the statement. */
  batches(): AsyncIterable<unknown[][]>;
  /** End the thread. Waits for it to end, unless `signal` aborts: then the process is about to end anyway. */
  stop(signal: AbortSignal): Promise<void>;
}

/**
 * The worker's module. Built, it is the module beside this one. Run from the TypeScript sources (the tests
 * run the CLI in-process, and they run after the build), there is no JavaScript beside it and Node cannot
 * start a thread on TypeScript: the build's module is used.
 */
function workerFile(): URL {
  const here = import.meta.url;
  return here.endsWith('.ts') ? new URL('../../../dist/commands/query/worker.js', here) : new URL('./worker.js', here);
}

/** What the worker sent, its crash, its exit and the run's stop, in the order they came; next() waits for one. */
class Inbox {
  private readonly items: Array<Reply | { type: 'crash'; error: Error } | { type: 'exit'; code: number }> = [];
  private wake: (() => void) | undefined;
  private readonly onAbort = () => this.push();

  constructor(
    worker: Worker,
    private readonly signal: AbortSignal,
  ) {
    worker.on('message', (reply: Reply) => this.push(reply));
    worker.on('error', (error: Error) => this.push({ type: 'crash', error }));
    worker.on('exit', (code: number) => this.push({ type: 'exit', code }));
    signal.addEventListener('abort', this.onAbort, { once: true });
  }

  private push(item?: Inbox['items'][number]): void {
    if (item !== undefined) this.items.push(item);
    this.wake?.();
    this.wake = undefined;
  }

  /** The next reply; a crash or an exit before the end is an error, and a stop of the run is CancelledError. */
  async next(): Promise<Reply> {
    for (;;) {
      if (this.signal.aborted) throw new CancelledError('Interrupted.', { cause: this.signal.reason });
      const item = this.items.shift();
      if (item?.type === 'crash') throw item.error;
      if (item?.type === 'exit') throw new CardboardError(`query: the thread that ran the statement stopped (exit code ${item.code}) before its last row.`);
      if (item !== undefined) return item;
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  dispose(): void {
    this.signal.removeEventListener('abort', this.onAbort);
  }
}

/**
 * Start `sql` over the mirror at `place` in a worker thread and wait for its columns; `limit` rows at most
 * are read. Whatever refuses it (no mirror, a write, bad SQL) is thrown here as runStatement throws it on
 * the main thread; `signal` stops the wait (CancelledError).
 */
export async function startStatement(place: MirrorPlace, board: MirrorBoard, sql: string, limit: number | undefined, signal: AbortSignal): Promise<StatementThread> {
  const taken = new SharedArrayBuffer(4);
  const job: StatementJob = { place, board, sql, taken, ...(limit === undefined ? {} : { limit }) };
  // The worker's young generation held at 8 MB: left to V8 it grows to 32 MB over a long result, for no gain in time.
  const worker = new Worker(workerFile(), { workerData: job, resourceLimits: { maxYoungGenerationSizeMb: 8 } });
  const inbox = new Inbox(worker, signal);
  const stop = async (during: AbortSignal) => {
    inbox.dispose();
    await Promise.race([worker.terminate(), whenAborted(during)]);
  };
  let first: Reply;
  try {
    first = await inbox.next();
    if (first.type === 'error') throw fromWire(first.error);
    if (first.type !== 'columns') throw new Error(`query: the statement's thread sent ${first.type} before its columns`);
  } catch (err) {
    await stop(signal);
    throw err;
  }
  const counter = new Int32Array(taken);
  async function* batches(): AsyncIterable<unknown[][]> {
    for (;;) {
      const reply = await inbox.next();
      if (reply.type === 'end') return;
      if (reply.type === 'error') throw fromWire(reply.error);
      if (reply.type !== 'rows') continue;
      yield reply.rows;
      // Taken (written): counted first, then said, so the worker, which counts before it waits, misses no word.
      Atomics.add(counter, 0, 1);
      worker.postMessage('taken');
    }
  }
  return { columns: first.columns, batches, stop };
}
