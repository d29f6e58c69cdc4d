// The import engine: rows from the reader, a bounded pool of workers, one state per row. Each row is
// known by the digest of what it sends (journal.ts): a resumed run matches rows to earlier records by
// content (resume.ts), and a row whose try may have been applied is settled by reading the board
// (recheck.ts) before anything else is sent for it. It emits typed events and never prints.
import { SeenIds } from '../api/seen-ids.js';
import type { Api } from '../api/types.js';
import type { Clock } from '../clock.js';
import { type ApiError, CardboardError } from '../errors.js';
import { childStop } from '../interrupt.js';
import { type Journal, rowDigest } from './journal.js';
import type { KeyIndex } from './match-index.js';
import { type PrepareState, prepareRow } from './prepare-row.js';
import { BoardRecheck, type Probe } from './recheck.js';
import { ResumeIndex } from './resume.js';
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
  /** The run's "take no new work" (the first Ctrl-C): stop taking rows, let requests in flight finish. */
  signal: AbortSignal;
  /** The run's "stop now" (the grace is over): requests in flight are cut off and their rows left uncertain. */
  stopNow?: AbortSignal;
  onEvent(event: ImportEvent): void;
  /** Tries of a row whose failure may safely repeat (default 6). */
  maxTries?: number;
  /** How long one row may meet nothing but 429s before the run stops (default 15 min). */
  giveUpAfterMs?: number;
  /** How long a row may fail to reach the service before the run stops (default 30 s). */
  unreachableAfterMs?: number;
  /**
   * Clock time before which rows in flight when an earlier run was killed are not looked for: the server
   * may still be applying them, and a read before it has would not find them (default: at once).
   */
  settleInFlightAt?: number;
}

/** The result: counts, and the error that stopped the run early (auth, Update Mode), if any. */
export interface EngineResult {
  summary: ImportSummary;
  fatal?: CardboardError;
}

/** Run the import over `items` (rows and bad records; the header was consumed by the caller). */
export async function runEngine(items: AsyncIterable<CsvItem>, o: EngineOptions): Promise<EngineResult> {
  const started = o.clock.now();
  const summary: ImportSummary = { rows: 0, created: 0, updated: 0, unchanged: 0, skipped: 0, rejected: 0, uncertain: 0, settled: 0, durationMs: 0, retries: 0, waits: 0 };
  o.onEvent({ type: 'start', at: started });
  // The engine's own stop: the run's drain, or a fatal answer (auth, Update Mode) that ends the run early.
  const stop = childStop(o.signal);
  const onUserStop = () => stopWith('interrupted');
  if (o.signal.aborted) onUserStop();
  else o.signal.addEventListener('abort', onUserStop, { once: true });
  let fatal: CardboardError | undefined;
  const prep: PrepareState = { columns: o.columns, sendEmpty: o.sendEmpty, match: o.match, seenKeys: new Map(), force: o.force };
  // Update Mode is not readable (spec 2.4 is UI-only): the first `_id` post goes alone and its answer tells.
  let modeConfirmed = false;
  let modeProbe: Promise<void> | undefined;
  /** Rows waiting for the mode probe's answer. */
  let modeWaiting = 0;

  function stopWith(reason: NonNullable<ImportSummary['stopped']>, error?: CardboardError): void {
    if (summary.stopped === undefined) {
      summary.stopped = reason;
      if (error) summary.stopMessage = error.message;
      o.onEvent({ type: 'stop', reason: error?.message ?? 'interrupted' });
    }
    if (error && !fatal) fatal = error;
    stop.abort();
  }

  /** Where a row stands: its line now, and the line and digest it is journalled under (see resume.ts). */
  interface Row {
    line: number;
    values: unknown[];
    journalLine: number;
    digest?: string;
    settled?: boolean;
  }

  function finish(row: Row, state: RowState, id?: string, message?: string): void {
    const outcome: RowOutcome = { line: row.line, state, values: row.values };
    if (id !== undefined) outcome.id = id;
    if (message !== undefined) outcome.message = message;
    if (row.settled) {
      outcome.settled = true;
      summary.settled++;
    }
    summary.rows++;
    summary[state]++;
    if (state !== 'skipped' && row.digest !== undefined) o.journal?.record(row.journalLine, row.digest, state, id);
    // A card a row of this import made or updated is its own: a content re-check never gives it to another row.
    if (id !== undefined && (state === 'created' || state === 'updated')) owned.add(id);
    o.onEvent({ type: 'row', outcome });
  }

  const resume = o.journal && o.journal.previous.length > 0 ? new ResumeIndex(o.journal.previous) : undefined;
  let landed: Promise<void> | undefined;
  /** The one wait for an earlier run's requests in flight to land, shared by every row that needs it. */
  const inFlightLanded = () => (landed ??= o.clock.sleep(Math.max(0, (o.settleInFlightAt ?? 0) - o.clock.now()), stop.signal));
  const owned = new SeenIds();
  for (const id of resume?.ownedIds() ?? []) owned.add(id);
  // Rows whose try may have been applied give up their slot and wait for one shared read of the board,
  // which starts once nothing else is left to send (recheck.ts).
  const recheck = new BoardRecheck(o.api, o.match?.field, owned, (): boolean => readerDone && active === recheck.held + modeWaiting, stop.signal);
  /** Wait for `promise` without holding a sending slot: rows waiting so must not block the reader. */
  async function unslotted<T>(promise: Promise<T>): Promise<T> {
    freeSlot();
    try {
      return await promise;
    } finally {
      await takeSlot(); // a whole batch resumes at once: back to at most `concurrency` sending
    }
  }
  const sc = {
    api: o.api,
    clock: o.clock,
    stop: stop.signal,
    now: o.stopNow,
    recheck: (probe: Probe) => unslotted(recheck.find(probe)),
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
    const row: Row = { line, values, journalLine: line };
    if (item.kind === 'bad') return finish(row, 'rejected', undefined, item.reason);
    const prepared = prepareRow(prep, line, values);
    if (prepared.kind === 'reject') return finish(row, 'rejected', undefined, prepared.message);
    const { body } = prepared;
    const idFromIndex = prepared.kind === 'send' && prepared.idFromIndex;
    row.digest = rowDigest(body, prepared.kind === 'unchanged' || idFromIndex);
    // Against the journal of earlier runs: by content, wherever the row stands now.
    let maybeApplied: string | undefined;
    let seen = resume?.match(line, row.digest);
    if (seen?.kind === 'pending') {
      const verdict = await unslotted(seen.decided);
      if (verdict.kind === 'changed') {
        const was = verdict.entry;
        if (prepared.kind === 'send' && body._id === undefined && prepared.key === undefined) {
          // What an unsettled earlier send held is known only by its digest: it cannot be looked for.
          const unsure = was.state === 'created' || was.state === 'updated' ? '' : ', and that send may or may not have been applied (check the board)';
          return finish(row, 'rejected', undefined, `changed after it was sent (line ${was.line})${unsure}: use --match-on or an _id column`);
        }
      }
      seen = undefined;
    }
    if (seen?.kind === 'known') {
      const was = seen.entry;
      row.journalLine = was.line;
      if (was.state === 'created' || was.state === 'updated') return finish(row, 'skipped', was.id, `${was.state} in an earlier run`);
      if (was.state === 'uncertain' || was.state === 'sending') {
        maybeApplied = was.state === 'sending' ? 'in flight when an earlier run ended' : 'uncertain in an earlier run';
        if (was.state === 'sending') await unslotted(inFlightLanded());
      }
    }
    if (prepared.kind === 'unchanged') return finish(row, 'unchanged', prepared.id, 'equal to the card; not sent');
    const { key } = prepared;
    let probe: (() => void) | undefined;
    if (body._id !== undefined) {
      // Unslotted, and idle for the board re-check: the probe row itself may be waiting for a read.
      while (!modeConfirmed && modeProbe && !stop.signal.aborted) {
        modeWaiting++;
        recheck.poke();
        try {
          await unslotted(modeProbe);
        } finally {
          modeWaiting--;
        }
      }
      if (!modeConfirmed && !stop.signal.aborted) modeProbe = new Promise<void>((resolve) => (probe = resolve));
    }
    try {
      o.journal?.sending(row.journalLine, row.digest);
      const result = await sendRow({ ...sc, onRetry: retried(line), onSettled: () => (row.settled = true) }, body, key, maybeApplied);
      await settle(row, body, result, idFromIndex, () => (modeConfirmed = true));
    } finally {
      // Released only after settle: waiting `_id` rows go once the answer has been judged.
      if (probe) {
        modeProbe = undefined;
        probe();
      }
    }
  }

  async function settle(row: Row, body: Record<string, unknown>, r: SendResult, idFromIndex: boolean, confirm: () => void): Promise<void> {
    const { line } = row;
    if (r.kind === 'stopped') {
      // Never sent: not a finished row; a re-run takes it, knowing nothing of it was applied.
      if (row.digest !== undefined) o.journal?.unsent(row.journalLine, row.digest);
      return;
    }
    if (r.kind === 'unreachable') {
      // Likewise: no state, the next run sends it.
      if (row.digest !== undefined) o.journal?.unsent(row.journalLine, row.digest);
      return stopWith('fatal', r.fatal);
    }
    if (r.kind === 'rejected') {
      finish(row, 'rejected', undefined, r.message);
      if (r.fatal) stopWith('fatal', r.fatal as ApiError);
      return;
    }
    if (r.kind === 'uncertain') return finish(row, 'uncertain', undefined, r.message);
    if (r.kind === 'found') return finish(row, body._id !== undefined && r.id === body._id ? 'updated' : 'created', r.id, `found on the board by ${r.by === 'key' ? 'its key' : 'content'} after: ${r.reason}`);
    const id = r.card._id;
    const note = r.recovered ? `after a retry (${r.recovered})` : undefined;
    if (body._id === undefined) return finish(row, 'created', id, note);
    if (id === body._id) {
      confirm();
      return finish(row, 'updated', id, note);
    }
    // Spec 4.3 rules 3-4: a different `_id` back means a new card. For an id from the board itself that
    // proves Always Create New; for an id from the CSV, the card may simply not exist.
    const exists = idFromIndex || (await o.api.getCard(String(body._id)).then(() => true, () => false));
    if (!exists) return finish(row, 'created', id, `no card with _id ${body._id}; a new card was created`);
    finish(row, 'created', id, `board created a new card instead of updating ${body._id}`);
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
    recheck.poke();
  };
  const failed = (err: unknown) => {
    stopWith('fatal', err instanceof CardboardError ? err : new CardboardError(String((err as Error)?.message ?? err), { cause: err }));
    release();
  };
  try {
    for await (const item of items) {
      if (stop.signal.aborted) break;
      if (item.kind === 'header') continue;
      resume?.advance(item.line);
      // Backpressure: the reader (and the file) waits while every worker is busy.
      await takeSlot();
      active++;
      handle(item).then(release, failed);
    }
  } catch (err) {
    // A read failure (I/O, decoding) ends the run after the rows in flight; a read cut off because the
    // run stopped (stdin ends when it drains) is no failure of the input.
    if (!stop.signal.aborted) stopWith('fatal', err instanceof CardboardError ? err : new CardboardError(`Reading the CSV failed: ${(err as Error).message}`, { cause: err }));
  }
  // Rows still waiting to learn whether they were changed are decided now that no row is left to claim.
  resume?.end();
  readerDone = true;
  recheck.poke();
  while (active > 0) await parked();
  o.signal.removeEventListener('abort', onUserStop);
  o.journal?.flush();
  summary.durationMs = o.clock.now() - started;
  return fatal ? { summary, fatal } : { summary };
}
