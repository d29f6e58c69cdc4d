// One row's life, as a state machine: read → prepared → (deciding | landing) → sending → (checking) →
// finished, or unsent. `advanceRow` is the one place that decides where a row goes next and which state
// it ends in; the engine (engine.ts) only does what each phase asks (prepare, match against the journal,
// wait, send, read a card) and feeds the answer back as a RowEvent. A new state is added here.
import { CardboardError } from '../errors.js';
import { holdsCard, mayLand, rowDigest } from './journal.js';
import type { Prepared } from './prepare-row.js';
import type { Resumed, Verdict } from './resume.js';
import type { SendResult } from './send.js';
import type { CsvItem, ImportSummary, RowState } from './types.js';

/** Why a row stops the whole run: the reason the summary gives, and the error the command ends with. */
interface RunStopRequest {
  reason: Exclude<NonNullable<ImportSummary['stopped']>, 'interrupted'>;
  error: CardboardError;
}

/**
 * Where a row stands, and so what the engine does next:
 * - `read`: prepare it (build its body, apply --match-on);
 * - `prepared`: match it against the journal of earlier runs, by content (resume.ts);
 * - `deciding`: wait, without a sending slot, to learn whether it was changed after it was sent;
 * - `landing`: wait, without a sending slot, for an earlier run's requests in flight to land;
 * - `sending`: journal it, then POST it (send.ts);
 * - `checking`: a different `_id` came back: read whether the posted `_id` names a card;
 * - `finished`: it ends in `state` (and may stop the run); `unsent`: its try never left, it has no state.
 */
export type RowPhase =
  | { at: 'read' }
  | { at: 'prepared' }
  | { at: 'deciding'; decided: Promise<Verdict> }
  | { at: 'landing' }
  | { at: 'sending' }
  | { at: 'checking'; id: string }
  | { at: 'finished'; state: RowState; id?: string; message?: string; stop?: RunStopRequest; confirmsUpdate?: true }
  | { at: 'unsent'; stop?: RunStopRequest };

/** What the engine learned doing what a phase asked: the input of advanceRow. */
export type RowEvent =
  | { type: 'prepared'; prepared: Prepared }
  | { type: 'matched'; seen: Resumed | undefined }
  | { type: 'verdict'; verdict: Verdict }
  | { type: 'landed' }
  | { type: 'sent'; result: SendResult }
  | { type: 'checked'; exists: boolean };

// The phases that carry nothing but their name, one value each: every row passes through them.
const READ: RowPhase = Object.freeze({ at: 'read' });
const PREPARED: RowPhase = Object.freeze({ at: 'prepared' });
const LANDING: RowPhase = Object.freeze({ at: 'landing' });
const SENDING: RowPhase = Object.freeze({ at: 'sending' });
const UNSENT: RowPhase = Object.freeze({ at: 'unsent' });

/** A phase in which the row's life is over. */
export type EndPhase = Extract<RowPhase, { at: 'finished' | 'unsent' }>;
type Finished = Extract<RowPhase, { at: 'finished' }>;

/** One row of the input and what its life has learned so far. */
export interface Row {
  readonly line: number;
  readonly values: unknown[];
  /** The bad record's reason, for an item the reader could not make a row of. */
  readonly bad?: string;
  /** The line it is journalled under: its own, or that of the earlier record it matched (resume.ts). */
  journalLine: number;
  /** The digest of what it sends (journal.ts), once prepared. */
  digest?: string;
  /** What it sends, once prepared: the body, its --match-on key, and whether `_id` came from the board. */
  body?: Record<string, unknown>;
  key?: string;
  idFromIndex: boolean;
  /** That `_id` was on the board when this run read its pages (not so for a mirror's: see Prepared). */
  idOnBoard?: boolean;
  /** --match-on found its card equal: not sent. */
  unchangedId?: string;
  /** Why an earlier try may have been applied: the board is read before anything is sent. */
  maybeApplied?: string;
  /** A read of the board decided its outcome. */
  settled?: boolean;
  phase: RowPhase;
}

/** What the end of a row writes, by state: a journal record (a row skipped keeps its earlier one), and ownership of its card. */
export const STATE_RULES: Readonly<Record<RowState, { journalled: boolean; ownsCard: boolean }>> = {
  created: { journalled: true, ownsCard: true },
  updated: { journalled: true, ownsCard: true },
  found: { journalled: true, ownsCard: true },
  unchanged: { journalled: true, ownsCard: false },
  skipped: { journalled: false, ownsCard: false },
  rejected: { journalled: true, ownsCard: false },
  uncertain: { journalled: true, ownsCard: false },
};

/** A row just read (or a bad record), at the start of its life. */
export function startRow(item: Extract<CsvItem, { kind: 'row' | 'bad' }>): Row {
  const row: Row = { line: item.line, values: item.values, journalLine: item.line, idFromIndex: false, phase: READ };
  return item.kind === 'bad' ? { ...row, bad: item.reason } : row;
}

/** Whether the row's life is over. */
export function isOver(phase: RowPhase): phase is EndPhase {
  return phase.at === 'finished' || phase.at === 'unsent';
}

/** Move `row` to its next phase on `event`, and return that phase. */
export function advanceRow(row: Row, event: RowEvent): RowPhase {
  row.phase = next(row, event);
  return row.phase;
}

const finished = (state: RowState, id?: string, message?: string): Finished => {
  const phase: Finished = { at: 'finished', state };
  if (id !== undefined) phase.id = id;
  if (message !== undefined) phase.message = message;
  return phase;
};

function next(row: Row, event: RowEvent): RowPhase {
  switch (event.type) {
    case 'prepared':
      return afterPrepare(row, event.prepared);
    case 'matched':
      return afterMatch(row, event.seen);
    case 'verdict':
      return afterVerdict(row, event.verdict);
    case 'landed':
      return afterJournal(row);
    case 'sent':
      return afterSend(row, event.result);
    case 'checked':
      if (row.phase.at !== 'checking') throw new Error(`a card check answered at ${row.phase.at}`);
      return createdInstead(row, row.phase.id, event.exists);
  }
}

function afterPrepare(row: Row, prepared: Prepared): RowPhase {
  if (prepared.kind === 'reject') return finished('rejected', undefined, prepared.message);
  row.body = prepared.body;
  if (prepared.kind === 'unchanged') row.unchangedId = prepared.id;
  else {
    row.idFromIndex = prepared.idFromIndex;
    if (prepared.idOnBoard) row.idOnBoard = true;
    if (prepared.key !== undefined) row.key = prepared.key;
  }
  row.digest = rowDigest(prepared.body, prepared.kind === 'unchanged' || row.idFromIndex);
  return PREPARED;
}

/** Against the journal of earlier runs: by content, wherever the row stands now. */
function afterMatch(row: Row, seen: Resumed | undefined): RowPhase {
  if (seen === undefined || seen.kind === 'new') return afterJournal(row);
  if (seen.kind === 'pending') return { at: 'deciding', decided: seen.decided };
  const was = seen.entry;
  row.journalLine = was.line;
  if (holdsCard(was)) return finished('skipped', was.id, `${was.state} in an earlier run`);
  // A try cut off in flight (uncertain) or in flight at a kill (sending) may still be landing on the server:
  // the row waits until none of that run's requests can, then the board is read for it.
  if (mayLand(was)) {
    row.maybeApplied = was.state === 'uncertain' ? 'uncertain in an earlier run' : 'in flight when an earlier run ended';
    return LANDING;
  }
  return afterJournal(row);
}

function afterVerdict(row: Row, verdict: Verdict): RowPhase {
  const body = row.body!;
  if (verdict.kind === 'changed' && row.unchangedId === undefined && body._id === undefined && row.key === undefined) {
    // What an unsettled earlier send held is known only by its digest: it cannot be looked for.
    const was = verdict.entry;
    const done = holdsCard(was);
    const unsure = done ? '' : ', and that send may or may not have been applied (check the board)';
    const again = done ? ' to update its card, or --again to send it as a new card' : '';
    return finished('rejected', undefined, `changed after it was sent (line ${was.line})${unsure}: use --match-on or an _id column${again}`);
  }
  return afterJournal(row);
}

/** Matched against the journal: a row equal to its card ends here; any other is sent. */
function afterJournal(row: Row): RowPhase {
  if (row.unchangedId !== undefined) return finished('unchanged', row.unchangedId, 'equal to the card; not sent');
  return SENDING;
}

function afterSend(row: Row, result: SendResult): RowPhase {
  const body = row.body!;
  switch (result.kind) {
    case 'stopped':
      // Never sent: not a finished row; a re-run takes it, knowing nothing of it was applied.
      return UNSENT;
    case 'unreachable':
      // Likewise: no state, the next run sends it.
      return { at: 'unsent', stop: { reason: 'fatal', error: result.fatal } };
    case 'rejected': {
      const phase = finished('rejected', undefined, result.message);
      if (result.fatal) phase.stop = { reason: 'fatal', error: result.fatal };
      return phase;
    }
    case 'uncertain':
      return finished('uncertain', undefined, result.message);
    case 'found':
      return afterFound(row, result);
    case 'ok': {
      const id = result.card._id;
      const note = result.recovered ? `after a retry (${result.recovered})` : undefined;
      if (body._id === undefined) return finished('created', id, note);
      // The answer an Update Mode probe waits for (engine.ts): this board updates by `_id`.
      if (id === body._id) return { ...finished('updated', id, note), confirmsUpdate: true };
      // Spec 4.3 rules 3-4: a different `_id` back means a new card. For an id this run read from the board
      // that proves Always Create New; for an id from the CSV or a mirror, the card may simply not exist (now).
      return row.idOnBoard ? createdInstead(row, id, true) : { at: 'checking', id };
    }
  }
}

/**
 * A read of the board found the row's card after a try that may have been applied. A try of this run made
 * (or updated) it; a try of an earlier run did, and then this run adds nothing to the board: `found`. An
 * `_id` row whose card was found under another id, while the posted id names a card, shows the board
 * creates instead of updating (spec 4.3 rule 3): the run stops as for any post that shows it.
 */
function afterFound(row: Row, result: Extract<SendResult, { kind: 'found' }>): RowPhase {
  const posted = row.body!._id;
  const by = result.by === 'key' ? 'its key' : 'content';
  let phase: RowPhase;
  if (result.earlier) {
    phase = finished('found', result.id, `already on the board (found by ${by}): an earlier run's try stored it (${result.reason}); not created again`);
  } else if (posted !== undefined && result.id === posted) {
    return { ...finished('updated', result.id, `found on the board by ${by} after: ${result.reason}`), confirmsUpdate: true };
  } else {
    phase = finished('created', result.id, `found on the board by ${by} after: ${result.reason}`);
  }
  if (posted !== undefined && result.id !== posted && result.idExists) phase.stop = createsInstead(row, result.id);
  return phase;
}

/** The post of an `_id` made the new card `id`: by design when no card had that `_id`, else the board's Update Mode. */
function createdInstead(row: Row, id: string, exists: boolean): RowPhase {
  const posted = String(row.body!._id);
  if (!exists) return finished('created', id, `no card with _id ${posted}; a new card was created`);
  const phase = finished('created', id, `board created a new card instead of updating ${posted}`);
  phase.stop = createsInstead(row, id);
  return phase;
}

/** The stop of a run whose board made the new card `id` for a post of the existing `_id`: Always Create New (spec 4.3 rule 3). */
function createsInstead(row: Row, id: string): RunStopRequest {
  const posted = String(row.body!._id);
  return {
    reason: 'mode',
    error: new CardboardError(
      `Line ${row.line} was posted with _id ${posted}, and the board created a new card ${id} instead of updating it: its Update Mode is 'Always Create New'. Stopped before making more duplicates.`,
      { hint: "Set Update Mode to 'Update if exists' in the board's Card Sources (and delete the new card), then run the same command again: rows done are skipped." },
    ),
  };
}
