// The mirror of a board on a PostgreSQL server, behind the same synchronous interfaces as SQLite's
// (MirrorStore, MirrorReader): each method is one call into the mirror's own thread (worker.ts, through
// bridge.ts), where the client talks to the server.
import type { Card, Field } from '../../spec-types.js';
import type { MirrorBoard, MirrorChange, MirrorDelivery, MirrorReader, MirrorStatus, MirrorStore, PullCursor, QueryResult } from '../types.js';
import type { PullLock } from '../pull-lock.js';
import { SyncThread } from './bridge.js';
import type { PgOpenJob, PgTarget } from './protocol.js';

/** What the thread is started with: the mirror to open, as a store or for `cardboard query`. */
export interface PgWorkerJob {
  kind: 'store' | 'reader';
  open: PgOpenJob;
}

/** Cards, or rows, asked of the thread at a time: one call per this many. */
const BATCH = 1000;

/**
 * The thread's module. Built, it is the module beside this one; run from the TypeScript sources (tests that
 * run the CLI in-process, after the build), Node cannot start a thread on TypeScript: the build's module is used.
 */
function workerFile(): URL {
  const here = import.meta.url;
  return here.endsWith('.ts') ? new URL('../../../dist/mirror/pg/worker.js', here) : new URL('./worker.js', here);
}

/** Start the thread and open the mirror in it; a failure ends the thread and is thrown as it was in the thread. */
function openThread(job: PgWorkerJob): SyncThread {
  const thread = SyncThread.start(workerFile(), job, job.open.target.env, { location: job.open.target.location });
  try {
    thread.call('open');
    return thread;
  } catch (err) {
    try {
      thread.close();
    } catch {
      // The error of the open is the one to tell.
    }
    throw err;
  }
}

/** The walk of a batched result: `next(max)` until a batch comes short; `close()` when the caller stops before that. */
function* batches<T>(next: () => T[], close: () => void): Generator<T> {
  let ended = false;
  try {
    for (;;) {
      const batch = next();
      if (batch.length < BATCH) ended = true;
      yield* batch;
      if (ended) return;
    }
  } finally {
    if (!ended) close();
  }
}

/** The PostgreSQL store of one board's mirror (MirrorStore). Open it with openMirror (open.ts). */
export class PgMirror implements MirrorStore {
  private constructor(
    private readonly thread: SyncThread,
    readonly location: string,
    readonly board: MirrorBoard,
  ) {}

  /** Open the mirror of `board` on the server of `target`: made when `create`, else notFilled when absent. */
  static open(target: PgTarget, board: MirrorBoard, create: boolean): PgMirror {
    return new PgMirror(openThread({ kind: 'store', open: { target, board, create } }), target.location, board);
  }

  private call<T>(method: string, ...args: unknown[]): T {
    return this.thread.call<T>(method, ...args);
  }

  lockPull(): Promise<PullLock> {
    this.call('lockPull');
    let held = true;
    const release = () => {
      if (!held) return;
      held = false;
      try {
        this.call('unlockPull');
      } catch {
        // The connection or the thread is gone: the server dropped the lock with the session.
      }
    };
    return Promise.resolve({ release });
  }

  schema(): Field[] | undefined {
    return this.call('schema');
  }

  saveSchema(fields: readonly Field[]): void {
    this.call('saveSchema', fields);
  }

  card(id: string): Card | undefined {
    return this.call('card', id);
  }

  count(): number {
    return this.call('count');
  }

  *cards(): Iterable<Card> {
    const walk = this.call<number>('cardsOpen');
    for (const text of batches(
      () => this.call<string[]>('cardsNext', walk, BATCH),
      () => this.call('cardsClose', walk),
    )) {
      yield JSON.parse(text) as Card;
    }
  }

  beginPull(now: string): PullCursor {
    return this.call('beginPull', now);
  }

  abandonPull(): PullCursor | undefined {
    return this.call('abandonPull');
  }

  pulledBy(pull: PullCursor, id: string): boolean {
    return this.call('pulledBy', pull, id);
  }

  savePage(pull: PullCursor, page: number, cards: readonly Card[]): MirrorChange[] {
    const changes = this.call<MirrorChange[]>('savePage', pull, page, cards);
    // The caller's cursor moves as SQLite's does: the thread had a copy.
    pull.nextPage = Math.max(pull.nextPage, page + 1);
    pull.pages += 1;
    pull.cards += cards.length;
    return changes;
  }

  unseen(pull: PullCursor): { id: string; missed: number }[] {
    return this.call('unseen', pull);
  }

  confirm(pull: PullCursor, card: Card): MirrorChange | undefined {
    return this.call('confirm', pull, card);
  }

  finishPull(pull: PullCursor, gone: readonly string[], now: string): MirrorChange[] {
    return this.call('finishPull', pull, gone, now);
  }

  applyDeliveries(deliveries: readonly MirrorDelivery[]): MirrorChange[] {
    return this.call('applyDeliveries', deliveries);
  }

  applyWrites(cards: readonly Card[], now: string): MirrorChange[] {
    return this.call('applyWrites', cards, now);
  }

  sync(): void {
    this.call('sync');
  }

  listenerBeat(since: string, now: string): void {
    this.call('listenerBeat', since, now);
  }

  listenerGone(since: string): void {
    this.call('listenerGone', since);
  }

  status(): MirrorStatus {
    return this.call('status');
  }

  close(): void {
    this.thread.close();
  }
}

/** A mirror on PostgreSQL opened for `cardboard query` (MirrorReader): one read-only statement at a time. */
export class PgReader implements MirrorReader {
  private constructor(
    private readonly thread: SyncThread,
    readonly location: string,
  ) {}

  /** Open the mirror of `board` on the server of `target` for queries; notFilled when it holds none. */
  static open(target: PgTarget, board: MirrorBoard): PgReader {
    return new PgReader(openThread({ kind: 'reader', open: { target, board, create: false } }), target.location);
  }

  query(sql: string): QueryResult {
    const columns = this.thread.call<string[]>('queryOpen', sql);
    const rows = batches(
      () => this.thread.call<unknown[][]>('queryNext', BATCH),
      () => this.thread.call('queryClose'),
    );
    return { columns, rows };
  }

  close(): void {
    this.thread.close();
  }
}
