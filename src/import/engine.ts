// The import engine: rows from the reader, a bounded pool of workers, one state per row (issue 4).
// It emits typed events and never prints; the command renders them.
import type { Api } from '../api/types.js';
import type { Clock } from '../clock.js';
import { type ApiError, CardboardError } from '../errors.js';
import type { Journal } from './journal.js';
import type { KeyIndex } from './match-index.js';
import { type PrepareState, prepareRow } from './prepare.js';
import { BoardRecheck } from './recheck.js';
import { type SendResult, sendRow } from './send.js';
import type { ColumnMapping, CsvItem, ImportEvent, ImportSummary, RowOutcome, RowState } from './types.js';

/** Everything a run needs, decided before the first row. */
export interface EngineOptions {
  /** The client: its rate gate paces every request of the run. */
  api: Api;
  /** Time, sleeps and jitter: the real clock, or a simulated one in tests. */
  clock: Clock;
  columns: ColumnMapping[];
  sendEmpty: boolean;
  concurrency: number;
  journal?: Journal;
  /** --match-on: the field and the board's index of it. */
  match?: KeyIndex;
  /** --force: send rows --match-on finds unchanged. */
  force?: boolean;
  /** Aborted by Ctrl-C: stop taking rows, let requests in flight finish. */
  signal: AbortSignal;
  onEvent(event: ImportEvent): void;
  /** Tries of a row whose failure may safely repeat (default 6). */
  maxTries?: number;
  /** How long one row may meet nothing but 429s before the run stops (default 15 min). */
  giveUpAfterMs?: number;
  /** How long a row may fail to reach the service before the run stops (default 30 s). */
  unreachableAfterMs?: number;
}

/** The result: counts, and the error that stopped the run early (auth, Update Mode), if any. */
export interface EngineResult {
  summary: ImportSummary;
  fatal?: CardboardError;
}

/** Run the import over `items` (rows and bad records; the header was consumed by the caller). */
export async function runEngine(items: AsyncIterable<CsvItem>, o: EngineOptions): Promise<EngineResult> {
  const started = o.clock.now();
  const summary: ImportSummary = { rows: 0, created: 0, updated: 0, unchanged: 0, skipped: 0, rejected: 0, uncertain: 0, durationMs: 0, retries: 0, waits: 0 };
  o.onEvent({ type: 'start', at: started });
  const stop = new AbortController();
  const onUserStop = () => stopWith('interrupted');
  o.signal.addEventListener('abort', onUserStop);
  let fatal: CardboardError | undefined;
  const prep: PrepareState = { columns: o.columns, sendEmpty: o.sendEmpty, match: o.match, seenKeys: new Map(), force: o.force };
  // Update Mode is not readable (spec 2.4 is UI-only): the first `_id` post goes alone and its answer tells.
  let modeConfirmed = false;
  let modeProbe: Promise<void> | undefined;

  function stopWith(reason: NonNullable<ImportSummary['stopped']>, error?: CardboardError): void {
    if (summary.stopped === undefined) {
      summary.stopped = reason;
      if (error) summary.stopMessage = error.message;
      o.onEvent({ type: 'stop', reason: error?.message ?? 'interrupted' });
    }
    if (error && !fatal) fatal = error;
    stop.abort();
  }

  function finish(line: number, state: RowState, values: unknown[], id?: string, message?: string): void {
    const outcome: RowOutcome = { line, state, values };
    if (id !== undefined) outcome.id = id;
    if (message !== undefined) outcome.message = message;
    summary.rows++;
    summary[state]++;
    if (state !== 'skipped') o.journal?.record(line, state, id);
    o.onEvent({ type: 'row', outcome });
  }

  // Rows whose create may have applied give up their slot and wait for one shared read of the board,
  // which starts once nothing else is left to send (recheck.ts).
  const recheck: BoardRecheck | undefined = o.match ? new BoardRecheck(o.api, o.match.field, (): boolean => readerDone && active === recheck!.held, stop.signal) : undefined;
  const sc = {
    api: o.api,
    clock: o.clock,
    stop: stop.signal,
    recheck: recheck && (async (key: string) => {
      const answer = recheck.find(key);
      freeSlot();
      try {
        return await answer;
      } finally {
        await takeSlot(); // a whole batch resumes at once: back to at most `concurrency` sending
      }
    }),
    maxTries: o.maxTries ?? 6,
    giveUpAfterMs: o.giveUpAfterMs ?? 15 * 60_000,
    unreachableAfterMs: o.unreachableAfterMs ?? 30_000,
    beforeSend: () => o.journal?.ready(),
  };
  const retried = (line: number) => (reason: string, attempt: number) => {
    summary.retries++;
    if (reason === '429') summary.waits++;
    o.onEvent({ type: 'retry', line, reason, attempt });
  };

  async function handle(item: Extract<CsvItem, { kind: 'row' | 'bad' }>): Promise<void> {
    const { line, values } = item;
    if (item.kind === 'bad') return finish(line, 'rejected', values, undefined, item.reason);
    const before = o.journal?.previous.get(line);
    if (before && (before.state === 'created' || before.state === 'updated')) {
      return finish(line, 'skipped', values, before.id, `${before.state} in an earlier run`);
    }
    const prepared = prepareRow(prep, line, values);
    if (prepared.kind === 'reject') return finish(line, 'rejected', values, undefined, prepared.message);
    if (prepared.kind === 'unchanged') return finish(line, 'unchanged', values, prepared.id, 'equal to the card; not sent');
    const { body, key, idFromIndex } = prepared;
    if (before?.state === 'uncertain' && body._id === undefined && !o.match) {
      return finish(line, 'uncertain', values, undefined, 'uncertain in an earlier run; not re-sent (check the board, then --restart)');
    }
    let probe: (() => void) | undefined;
    if (body._id !== undefined) {
      while (!modeConfirmed && modeProbe && !stop.signal.aborted) await modeProbe;
      if (!modeConfirmed && !stop.signal.aborted) modeProbe = new Promise<void>((resolve) => (probe = resolve));
    }
    try {
      const result = await sendRow({ ...sc, onRetry: retried(line) }, body, key);
      await settle(line, values, body, result, idFromIndex, () => (modeConfirmed = true));
    } finally {
      // Released only after settle: waiting `_id` rows go once the answer has been judged.
      if (probe) {
        modeProbe = undefined;
        probe();
      }
    }
  }

  async function settle(line: number, values: unknown[], body: Record<string, unknown>, r: SendResult, idFromIndex: boolean, confirm: () => void): Promise<void> {
    if (r.kind === 'stopped') return; // never sent: not a finished row; a re-run takes it
    if (r.kind === 'unreachable') return stopWith('fatal', r.fatal); // likewise: no state, the next run sends it
    if (r.kind === 'rejected') {
      finish(line, 'rejected', values, undefined, r.message);
      if (r.fatal) stopWith('fatal', r.fatal as ApiError);
      return;
    }
    if (r.kind === 'uncertain') return finish(line, 'uncertain', values, undefined, r.message);
    if (r.kind === 'found') return finish(line, 'created', values, r.id, `found on the board after: ${r.reason}`);
    const id = r.card._id;
    const note = r.recovered ? `after a retry (${r.recovered})` : undefined;
    if (body._id === undefined) return finish(line, 'created', values, id, note);
    if (id === body._id) {
      confirm();
      return finish(line, 'updated', values, id, note);
    }
    // Spec 4.3 rules 3-4: a different `_id` back means a new card. For an id from the board itself that
    // proves Always Create New; for an id from the CSV, the card may simply not exist.
    const exists = idFromIndex || (await o.api.getCard(String(body._id)).then(() => true, () => false));
    if (!exists) return finish(line, 'created', values, id, `no card with _id ${body._id}; a new card was created`);
    finish(line, 'created', values, id, `board created a new card instead of updating ${body._id}`);
    stopWith(
      'mode',
      new CardboardError(
        `Line ${line} was posted with _id ${body._id}, and the board created a new card ${id} instead of updating it: its Update Mode is 'Always Create New'. Stopped before making more duplicates.`,
        { hint: "Set Update Mode to 'Update if exists' in the board's Card Sources (and delete the new card), then run the same command again: rows done are skipped." },
      ),
    );
  }

  // A counting semaphore: `sending` rows hold a slot; `active` rows are unfinished (those waiting for a
  // re-check hold none). The reader, and rows back from a re-check, park until a slot frees.
  let active = 0;
  let sending = 0;
  let readerDone = false;
  let wakers: (() => void)[] = [];
  const parked = () => new Promise<void>((resolve) => wakers.push(resolve));
  const freeSlot = () => {
    sending--;
    const ws = wakers;
    wakers = [];
    for (const w of ws) w();
  };
  async function takeSlot(): Promise<void> {
    while (sending >= o.concurrency) await parked();
    sending++;
  }
  const release = () => {
    active--;
    freeSlot();
    recheck?.poke();
  };
  const failed = (err: unknown) => {
    stopWith('fatal', err instanceof CardboardError ? err : new CardboardError(String((err as Error)?.message ?? err), { cause: err }));
    release();
  };
  try {
    for await (const item of items) {
      if (stop.signal.aborted) break;
      if (item.kind === 'header') continue;
      // Backpressure: the reader (and the file) waits while every worker is busy.
      await takeSlot();
      active++;
      handle(item).then(release, failed);
    }
  } catch (err) {
    // A read failure (I/O, decoding) ends the run after the rows in flight.
    stopWith('fatal', err instanceof CardboardError ? err : new CardboardError(`Reading the CSV failed: ${(err as Error).message}`, { cause: err }));
  }
  readerDone = true;
  recheck?.poke();
  while (active > 0) await parked();
  o.signal.removeEventListener('abort', onUserStop);
  o.journal?.flush();
  summary.durationMs = o.clock.now() - started;
  return fatal ? { summary, fatal } : { summary };
}
