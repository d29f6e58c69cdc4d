// The import engine: rows from the reader, a bounded pool of sending slots, one state per row. Each row
// lives through the state machine of row-life.ts; the engine does what each phase asks and keeps what the
// rows share: the slots (slots.ts), the Update Mode probe (mode-probe.ts), the journal, the board re-check
// and the summary. Each row is known by the digest of what it sends (journal.ts): a resumed run matches
// rows to earlier records by content (resume.ts), and a row whose try may have been applied is settled by
// reading the board (recheck.ts) before anything else is sent for it. With a concurrency of 1 the rows go
// in input order (in-order.ts). It emits typed events and never prints.
import { SeenIds } from '../api/seen-ids.js';
import type { Api } from '../api/types.js';
import type { Clock } from '../clock.js';
import { ApiError, CardboardError } from '../errors.js';
import type { Card } from '../spec-types.js';
import { childStop, type Stopper } from '../interrupt.js';
import { InOrder } from './in-order.js';
import { holdsCard, type Journal } from './journal.js';
import type { KeyIndex } from './match-index.js';
import { ModeProbe } from './mode-probe.js';
import { type PrepareState, prepareRow } from './prepare-row.js';
import { BoardRecheck, type Probe } from './recheck.js';
import { type Resumed, ResumeIndex } from './resume.js';
import { advanceRow, type EndPhase, isOver, type Row, type RowEvent, STATE_RULES, startRow } from './row-life.js';
import { type SendContext, sendRow } from './send.js';
import { Slots } from './slots.js';
import type { ColumnMapping, CsvItem, ImportEvent, ImportSummary, RowOutcome } from './types.js';

/** Everything a run needs, decided before the first row. */
interface EngineOptions {
  /** The client: its rate gate paces every request of the run. */
  api: Api;
  /** Time, sleeps and jitter: the real clock, or a simulated one in tests. */
  clock: Clock;
  columns: ColumnMapping[];
  sendEmpty: boolean;
  /** Requests in flight at once; 1: rows in input order, each row's card answered before the next row sends. */
  concurrency: number;
  journal?: Journal;
  /** --match-on: the field and the board's index of it. */
  match?: KeyIndex;
  /**
   * Told of every card the service returned for a row (created or updated) or a read of the board found for
   * one, and of every posted `_id` the board answered 404 for: how a mirror of the board keeps this run's
   * writes (import/mirror-writes.ts). Called before the row's outcome is journalled.
   */
  cards?: CardSink;
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
  /** The journal's last run read its input to the end: this run is a re-run of it, not a resume (see remembered()). */
  rerun?: boolean;
  /**
   * Clock time before which rows in flight when an earlier run was killed are not looked for: the server
   * may still be applying them, and a read before it has would not find them (default: at once).
   */
  settleInFlightAt?: number;
}

/** What a run learns of the board's cards from its own writes (see EngineOptions.cards). */
export interface CardSink {
  card(card: Card): void;
  gone(id: string): void;
}

/** The result: counts, and the error that stopped the run early (auth, Update Mode), if any. */
export interface EngineResult {
  summary: ImportSummary;
  fatal?: CardboardError;
}

/** Run the import over `items` (rows and bad records; the header was consumed by the caller). */
export function runEngine(items: AsyncIterable<CsvItem>, opts: EngineOptions): Promise<EngineResult> {
  return new ImportRun(opts).run(items);
}

/** One run of the engine: what the rows share, and the driver of each row's life. */
class ImportRun {
  private readonly started: number;
  private readonly summary: ImportSummary = { rows: 0, created: 0, updated: 0, found: 0, unchanged: 0, skipped: 0, rejected: 0, uncertain: 0, settled: 0, durationMs: 0, retries: 0, waits: 0 };
  private fatal: CardboardError | undefined;
  private readonly prep: PrepareState;
  private readonly slots: Slots;
  /** Concurrency 1: the turn of each row, in input order. */
  private readonly order: InOrder | undefined;
  private readonly mode: ModeProbe;
  private readonly resume: ResumeIndex | undefined;
  /** Cards rows of this import (or of earlier runs of it) created or updated: never given to another row. */
  private readonly owned = new SeenIds();
  private readonly recheck: BoardRecheck;
  private readonly sendContext: SendContext;
  /** The row that is the Update Mode probe now (one at a time), and the release of the rows waiting for its answer. */
  private probe: { row: Row; release: () => void } | undefined;
  private readerDone = false;
  private landed: Promise<void> | undefined;

  // Stopping, in one place: the run's drain (the caller's signal) or a row's fatal answer (auth, Update
  // Mode) aborts `stop`, which ends the reader, every wait and every try not yet sent.
  private readonly stop: Stopper;
  private readonly onUserStop = () => this.stopWith('interrupted');

  private stopWith(reason: NonNullable<ImportSummary['stopped']>, error?: CardboardError): void {
    if (this.summary.stopped === undefined) {
      this.summary.stopped = reason;
      if (error) this.summary.stopMessage = error.message;
      this.opts.onEvent({ type: 'stop', reason: error?.message ?? 'interrupted' });
    }
    if (error && !this.fatal) this.fatal = error;
    this.stop.abort();
  }

  constructor(private readonly opts: EngineOptions) {
    this.started = opts.clock.now();
    this.stop = childStop(opts.signal);
    this.prep = { columns: opts.columns, sendEmpty: opts.sendEmpty, match: opts.match, seenKeys: new Map(), force: opts.force };
    this.slots = new Slots(opts.concurrency);
    this.order = opts.concurrency === 1 ? new InOrder() : undefined;
    const journal = opts.journal;
    this.resume = journal && journal.previous.length > 0 ? new ResumeIndex(journal.previous, (run) => journal.sameContent(run)) : undefined;
    // Cards any earlier run of this import made, updated or found (forgotten records too): never another row's.
    for (const id of journal?.knownIds ?? []) this.owned.add(id);
    // Rows whose try may have been applied give up their slot and wait for one shared read of the board,
    // which starts once nothing else is left to send: every row still alive waits (recheck.ts). In input
    // order only the row with the turn can wait for a read, and no other row may send before it: at once.
    const idle = this.order ? () => true : () => this.readerDone && this.slots.active === this.recheck.unanswered + this.mode.waiting;
    this.recheck = new BoardRecheck(opts.api, opts.match?.field, this.owned, idle, this.stop.signal);
    // Unslotted, and idle for the board re-check: the probe row itself may be waiting for a read.
    this.mode = new ModeProbe((p) => this.slots.unslotted(p), () => this.recheck.poke(), this.stop.signal);
    this.sendContext = {
      api: opts.api,
      clock: opts.clock,
      stop: this.stop.signal,
      now: opts.stopNow,
      recheck: (probe: Probe) => this.slots.unslotted(this.recheck.find(probe)),
      updatesById: () => this.mode.updatesById,
      maxTries: opts.maxTries ?? 6,
      giveUpAfterMs: opts.giveUpAfterMs ?? 15 * 60_000,
      unreachableAfterMs: opts.unreachableAfterMs ?? 30_000,
      beforeSend: () => opts.journal?.ready(),
      onRetry: (row, reason, attempt) => {
        // Each try is journalled before it leaves, so a later run knows when the last one of a killed run did.
        if (row.digest !== undefined) opts.journal?.sending(row.journalLine, row.digest);
        this.summary.retries++;
        if (reason === '429') this.summary.waits++;
        this.opts.onEvent({ type: 'retry', line: row.line, reason, attempt });
      },
      onSettled: (row) => (row.settled = true),
    };
  }

  async run(items: AsyncIterable<CsvItem>): Promise<EngineResult> {
    const { opts, summary } = this;
    opts.onEvent({ type: 'start', at: this.started });
    if (opts.signal.aborted) this.onUserStop();
    else opts.signal.addEventListener('abort', this.onUserStop, { once: true });
    try {
      for await (const item of items) {
        if (this.stop.signal.aborted) break;
        if (item.kind === 'header') continue;
        this.resume?.advance(item.line);
        // Backpressure: the reader (and the file) waits while every slot is held.
        const slot = this.slots.start();
        if (slot) await slot;
        const row = startRow(item);
        this.order?.add(row);
        // Not awaited, and never rejects: a row's life ends its own slot (live).
        void this.live(row);
        // In input order, the next row is read once this one has ended (or the oldest waits for a verdict).
        const ahead = this.order?.readerMayGo();
        if (ahead) await ahead;
      }
    } catch (err) {
      // A read failure (I/O, decoding) ends the run after the rows in flight; a read cut off because the
      // run stopped (stdin ends when it drains) is no failure of the input.
      if (!this.stop.signal.aborted) this.stopWith('fatal', err instanceof CardboardError ? err : new CardboardError(`Reading the input failed: ${(err as Error).message}`, { cause: err }));
    }
    // Rows still waiting to learn whether they were changed are decided now that no row is left to claim.
    this.resume?.end();
    this.readerDone = true;
    this.recheck.poke();
    await this.slots.drained();
    opts.signal.removeEventListener('abort', this.onUserStop);
    opts.journal?.flush();
    summary.durationMs = opts.clock.now() - this.started;
    return this.fatal ? { summary, fatal: this.fatal } : { summary };
  }

  /**
   * Drive one row through its life: do what its phase asks, feed the answer to advanceRow, until it is
   * over; then its slot frees, whatever its end (a failure stops the run). The phases before the first wait
   * run at once, so rows are prepared and matched in input order. No closure or promise per row beyond its
   * own: most rows cost this one async call.
   */
  private async live(row: Row): Promise<void> {
    try {
      while (!isOver(row.phase)) {
        // In input order, a row waits (without its slot) for every row read before it to end, before it
        // talks to the server: waits for an earlier run's requests to land, sends, retries, reads the board.
        const turn = this.order?.turn(row);
        if (turn) await this.slots.unslotted(turn);
        const step = this.act(row);
        advanceRow(row, step instanceof Promise ? await step : step);
        this.order?.changed();
      }
      this.end(row, row.phase);
    } catch (err) {
      this.stopWith('fatal', err instanceof CardboardError ? err : new CardboardError(String((err as Error)?.message ?? err), { cause: err }));
    } finally {
      // Released only once the answer has been judged (and the run stopped, if it must): waiting `_id` rows go then.
      if (this.probe?.row === row) {
        const { release } = this.probe;
        this.probe = undefined;
        release();
      }
      this.slots.end();
      this.order?.end(row);
      this.recheck.poke();
    }
  }

  /** What the row's phase asks for. */
  private act(row: Row): RowEvent | Promise<RowEvent> {
    const phase = row.phase;
    switch (phase.at) {
      case 'read':
        return { type: 'prepared', prepared: row.bad !== undefined ? { kind: 'reject', message: row.bad } : prepareRow(this.prep, row.line, row.values) };
      case 'prepared':
        return { type: 'matched', seen: this.remembered(row, this.resume?.match(row.line, row.digest!)) };
      case 'deciding':
        return this.slots.unslotted(phase.decided).then((verdict): RowEvent => ({ type: 'verdict', verdict }));
      case 'landing':
        return this.slots.unslotted(this.inFlightLanded()).then((): RowEvent => ({ type: 'landed' }));
      case 'sending':
        return this.post(row);
      case 'checking':
        return this.opts.api.getCard(String(row.body!._id)).then(
          (): RowEvent => ({ type: 'checked', exists: true }),
          (err: unknown): RowEvent => {
            if (err instanceof ApiError && err.status === 404) this.opts.cards?.gone(String(row.body!._id));
            return { type: 'checked', exists: false };
          },
        );
      default:
        throw new Error(`line ${row.line}: nothing to do at ${phase.at}`);
    }
  }

  /**
   * A row an earlier, complete run finished is skipped (the journal's memory) when it would create a card.
   * A row with a key (an `_id`, or a --match-on key) is sent by that key again, as every run does: its
   * post cannot add a card where the key names one, and equal rows end `unchanged` without a request.
   */
  private remembered(row: Row, seen: Resumed | undefined): Resumed | undefined {
    if (!this.opts.rerun || seen?.kind !== 'known' || !holdsCard(seen.entry)) return seen;
    const keyed = row.unchangedId !== undefined || row.key !== undefined || row.body?._id !== undefined;
    return keyed ? { kind: 'new' } : seen;
  }

  /** Journal the row's first try, then send it (send.ts); `_id` rows pass the Update Mode probe first. */
  private async post(row: Row): Promise<RowEvent> {
    const body = row.body!;
    if (body._id !== undefined) {
      const release = await this.mode.pass();
      if (release) this.probe = { row, release };
    }
    this.opts.journal?.sending(row.journalLine, row.digest!);
    // One context for every row (no copy of it per row): the row is passed beside it.
    const result = await sendRow(this.sendContext, row, body, row.key, row.maybeApplied);
    if (result.kind === 'ok' || result.kind === 'found') this.opts.cards?.card(result.card);
    return { type: 'sent', result };
  }

  /** The one wait for an earlier run's requests in flight to land, shared by every row that needs it. */
  private inFlightLanded(): Promise<void> {
    return (this.landed ??= this.opts.clock.sleep(Math.max(0, (this.opts.settleInFlightAt ?? 0) - this.opts.clock.now()), this.stop.signal));
  }

  /** The end of a row's life: its outcome (or `unsent`) in the journal, the summary and the events; the run stops if the row says so. */
  private end(row: Row, phase: EndPhase): void {
    if (phase.at === 'unsent') {
      if (row.digest !== undefined) this.opts.journal?.unsent(row.journalLine, row.digest);
    } else {
      if (phase.confirmsUpdate) this.mode.confirm();
      const { state, id, message } = phase;
      const outcome: RowOutcome = { line: row.line, state, values: row.values };
      if (id !== undefined) outcome.id = id;
      if (message !== undefined) outcome.message = message;
      if (row.settled) {
        outcome.settled = true;
        this.summary.settled++;
      }
      this.summary.rows++;
      this.summary[state]++;
      const rules = STATE_RULES[state];
      if (rules.journalled && row.digest !== undefined) this.opts.journal?.record(row.journalLine, row.digest, state, id);
      // A card a row of this import made or updated is its own: a content re-check never gives it to another row.
      if (rules.ownsCard && id !== undefined) this.owned.add(id);
      this.opts.onEvent({ type: 'row', outcome });
    }
    if (phase.stop) this.stopWith(phase.stop.reason, phase.stop.error);
  }
}
