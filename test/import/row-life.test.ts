// One row's life (src/import/row-life.ts): each event moves a row to one next phase, and the states a row
// ends in are decided there. First the machine alone, fed by hand; then the engine driving real rows
// through it over the simulated service, its journal records showing each step.
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/errors.js';
import { runEngine } from '../../src/import/engine.js';
import { type Journal, type JournalEntry, rowDigest } from '../../src/import/journal.js';
import type { Verdict } from '../../src/import/resume.js';
import { advanceRow, type Row, type RowEvent, type RowPhase, STATE_RULES, startRow } from '../../src/import/row-life.js';
import { type ColumnMapping, type CsvItem, ROW_STATES, type RowOutcome } from '../../src/import/types.js';
import { SimService, simApi, simClock } from '../helpers/sim.js';

const BODY = { Name: 'A', Status: 'Open' };
const DIGEST = rowDigest(BODY, false);
const row = (line = 2): Row => startRow({ kind: 'row', line, values: ['A', 'Open'] });
const send = (body: Record<string, unknown> = { ...BODY }, extra: { key?: string; idFromIndex?: boolean; idOnBoard?: boolean } = {}): RowEvent => ({
  type: 'prepared',
  prepared: { kind: 'send', body, idFromIndex: extra.idFromIndex ?? false, ...(extra.key === undefined ? {} : { key: extra.key }), ...(extra.idOnBoard ? { idOnBoard: true } : {}) },
});
const entry = (state: JournalEntry['state'], line = 7): JournalEntry => ({ line, digest: DIGEST, state, id: 'c-old', run: 0 });

/** Feed `events` to `r`; the phases it went through, the first one included. */
function walk(r: Row, events: RowEvent[]): RowPhase['at'][] {
  const seen: RowPhase['at'][] = [r.phase.at];
  for (const e of events) seen.push(advanceRow(r, e).at);
  return seen;
}

describe("a row's life, one event at a time", () => {
  it('a new row: read → prepared → sending → finished created, with its digest and the id the service gave', () => {
    const r = row();
    expect(walk(r, [send(), { type: 'matched', seen: { kind: 'new' } }, { type: 'sent', result: { kind: 'ok', card: { _id: 'c1', ...BODY } } }])).toEqual([
      'read',
      'prepared',
      'sending',
      'finished',
    ]);
    expect(r.phase).toEqual({ at: 'finished', state: 'created', id: 'c1' });
    expect(r).toMatchObject({ digest: DIGEST, journalLine: 2, body: BODY });
  });

  it('a bad record or a row that cannot be sent is rejected at once, with its reason', () => {
    const bad = startRow({ kind: 'bad', line: 5, values: ['x'], reason: 'unclosed quote' });
    expect(walk(bad, [{ type: 'prepared', prepared: { kind: 'reject', message: 'unclosed quote' } }])).toEqual(['read', 'finished']);
    expect(bad.phase).toEqual({ at: 'finished', state: 'rejected', message: 'unclosed quote' });
    expect(bad.bad).toBe('unclosed quote');
    expect(bad.digest).toBeUndefined(); // nothing to journal
  });

  it('a row an earlier run finished is skipped under the line it was journalled at', () => {
    const r = row(3);
    expect(walk(r, [send(), { type: 'matched', seen: { kind: 'known', entry: entry('created') } }])).toEqual(['read', 'prepared', 'finished']);
    expect(r.phase).toEqual({ at: 'finished', state: 'skipped', id: 'c-old', message: 'created in an earlier run' });
    expect(r.journalLine).toBe(7);
  });

  it('a row in flight when an earlier run ended waits for it to land, then is sent saying why the board is read first', () => {
    const r = row();
    expect(walk(r, [send(), { type: 'matched', seen: { kind: 'known', entry: entry('sending') } }, { type: 'landed' }])).toEqual([
      'read',
      'prepared',
      'landing',
      'sending',
    ]);
    expect(r.maybeApplied).toBe('in flight when an earlier run ended');
    const uncertain = row();
    // A try cut off in flight may still be landing too: it waits as a row in flight at a kill does.
    expect(walk(uncertain, [send(), { type: 'matched', seen: { kind: 'known', entry: entry('uncertain') } }])).toEqual(['read', 'prepared', 'landing']);
    expect(uncertain.maybeApplied).toBe('uncertain in an earlier run');
  });

  it('a row that looks changed waits for the verdict: changed and unkeyed is rejected; new, or keyed, is sent', () => {
    const decided = new Promise<Verdict>(() => {});
    const changed: Verdict = { kind: 'changed', entry: entry('uncertain', 2) };
    const r = row();
    expect(walk(r, [send(), { type: 'matched', seen: { kind: 'pending', decided } }, { type: 'verdict', verdict: changed }])).toEqual([
      'read',
      'prepared',
      'deciding',
      'finished',
    ]);
    expect(r.phase).toMatchObject({ state: 'rejected', message: expect.stringMatching(/^changed after it was sent \(line 2\), and that send may or may not have been applied/) });
    const keyed = row();
    expect(walk(keyed, [send({ ...BODY }, { key: 'A' }), { type: 'matched', seen: { kind: 'pending', decided } }, { type: 'verdict', verdict: changed }]).at(-1)).toBe('sending');
    const fresh = row();
    expect(walk(fresh, [send(), { type: 'matched', seen: { kind: 'pending', decided } }, { type: 'verdict', verdict: { kind: 'new' } }]).at(-1)).toBe('sending');
  });

  it('a --match-on row equal to its card ends unchanged, after the journal is consulted', () => {
    const r = row();
    const events: RowEvent[] = [{ type: 'prepared', prepared: { kind: 'unchanged', body: { ...BODY, _id: 'c9' }, id: 'c9' } }, { type: 'matched', seen: undefined }];
    expect(walk(r, events)).toEqual(['read', 'prepared', 'finished']);
    expect(r.phase).toEqual({ at: 'finished', state: 'unchanged', id: 'c9', message: 'equal to the card; not sent' });
    expect(r.digest).toBe(DIGEST); // the board's _id is not part of what the row sends
  });

  it('what a send ends in: every SendResult maps to one phase, and a fatal one asks the run to stop', () => {
    const after = (result: Extract<RowEvent, { type: 'sent' }>['result'], body: Record<string, unknown> = { ...BODY }) => {
      const r = row();
      advanceRow(r, send(body));
      advanceRow(r, { type: 'matched', seen: undefined });
      return advanceRow(r, { type: 'sent', result });
    };
    const denied = new ApiError('401', { method: 'POST', url: '/api/card', status: 401 });
    expect(after({ kind: 'stopped' })).toEqual({ at: 'unsent' });
    expect(after({ kind: 'unreachable', fatal: denied })).toEqual({ at: 'unsent', stop: { reason: 'fatal', error: denied } });
    expect(after({ kind: 'rejected', message: '401', fatal: denied })).toEqual({ at: 'finished', state: 'rejected', message: '401', stop: { reason: 'fatal', error: denied } });
    expect(after({ kind: 'uncertain', message: '502' })).toEqual({ at: 'finished', state: 'uncertain', message: '502' });
    expect(after({ kind: 'found', id: 'c4', reason: '502', by: 'content', card: { _id: 'c4' } })).toEqual({ at: 'finished', state: 'created', id: 'c4', message: 'found on the board by content after: 502' });
    expect(after({ kind: 'found', id: 'c4', reason: '502', by: 'key', card: { _id: 'c4' } }, { ...BODY, _id: 'c4' })).toMatchObject({ state: 'updated' });
    expect(after({ kind: 'ok', card: { _id: 'c5' }, recovered: 'ECONNRESET' })).toEqual({ at: 'finished', state: 'created', id: 'c5', message: 'after a retry (ECONNRESET)' });
    // The same `_id` back: an update, and the answer the Update Mode probe waits for.
    expect(after({ kind: 'ok', card: { _id: 'c6' } }, { ...BODY, _id: 'c6' })).toEqual({ at: 'finished', state: 'updated', id: 'c6', confirmsUpdate: true });
  });

  it('another `_id` back: the row checks whether the posted card exists; if it does, the board creates instead of updating and the run stops', () => {
    const posted = (exists: boolean) => {
      const r = row();
      const seen = walk(r, [send({ ...BODY, _id: 'c1' }), { type: 'matched', seen: undefined }, { type: 'sent', result: { kind: 'ok', card: { _id: 'c2' } } }, { type: 'checked', exists }]);
      return { seen, phase: r.phase };
    };
    const missing = posted(false);
    expect(missing.seen).toEqual(['read', 'prepared', 'sending', 'checking', 'finished']);
    expect(missing.phase).toEqual({ at: 'finished', state: 'created', id: 'c2', message: 'no card with _id c1; a new card was created' });
    const there = posted(true);
    expect(there.phase).toMatchObject({ state: 'created', id: 'c2', message: 'board created a new card instead of updating c1', stop: { reason: 'mode' } });
    expect((there.phase as { stop: { error: Error } }).stop.error.message).toMatch(/^Line 2 was posted with _id c1, and the board created a new card c2 .*'Always Create New'/);
    // An `_id` the board itself gave (--match-on over its pages) needs no check: the card exists.
    const r = row();
    advanceRow(r, send({ ...BODY, _id: 'c1' }, { key: 'A', idFromIndex: true, idOnBoard: true }));
    advanceRow(r, { type: 'matched', seen: undefined });
    expect(advanceRow(r, { type: 'sent', result: { kind: 'ok', card: { _id: 'c2' } } })).toMatchObject({ at: 'finished', state: 'created', stop: { reason: 'mode' } });
    // One from a mirror may name a card deleted since: checked like an `_id` of the file.
    const m = row();
    advanceRow(m, send({ ...BODY, _id: 'c1' }, { key: 'A', idFromIndex: true }));
    advanceRow(m, { type: 'matched', seen: undefined });
    expect(advanceRow(m, { type: 'sent', result: { kind: 'ok', card: { _id: 'c2' } } })).toEqual({ at: 'checking', id: 'c2' });
  });

  it('every state says whether it is journalled and owns its card', () => {
    expect(Object.keys(STATE_RULES).sort()).toEqual([...ROW_STATES].sort());
    expect(ROW_STATES.filter((s) => !STATE_RULES[s].journalled)).toEqual(['skipped']);
    expect(ROW_STATES.filter((s) => STATE_RULES[s].ownsCard)).toEqual(['created', 'updated', 'found']);
  });
});

/** A journal that records what the engine writes to it, in order; `previous` is an earlier run's. */
function recordingJournal(previous: JournalEntry[] = []) {
  const calls: unknown[][] = [];
  const journal = {
    previous,
    sending: (line: number, digest: string) => calls.push(['sending', line, digest]),
    unsent: (line: number, digest: string) => calls.push(['unsent', line, digest]),
    record: (line: number, digest: string, state: string, id?: string) => calls.push([state, line, digest, id]),
    ready: () => undefined,
    flush() {},
  } as unknown as Journal;
  return { journal, calls };
}

async function engineRun(items: CsvItem[], columns: ColumnMapping[], journal: Journal, service: (clock: ReturnType<typeof simClock>) => SimService) {
  const clock = simClock();
  const sim = service(clock);
  const outcomes: RowOutcome[] = [];
  async function* source(): AsyncGenerator<CsvItem> {
    yield* items;
  }
  const result = await clock.run(
    runEngine(source(), {
      api: simApi(sim, clock),
      clock,
      columns,
      sendEmpty: false,
      concurrency: 8,
      journal,
      signal: new AbortController().signal,
      onEvent: (e) => {
        if (e.type === 'row') outcomes.push(e.outcome);
      },
    }),
  );
  return { result, outcomes, sim };
}

const COLUMNS: ColumnMapping[] = ['Name', 'Status'].map((h, index) => ({ header: h, index, target: { kind: 'field', field: h }, how: 'own name' }));
const ID_COLUMNS: ColumnMapping[] = [{ header: '_id', index: 0, target: { kind: 'id' }, how: 'id column' }, ...COLUMNS.map((c) => ({ ...c, index: c.index + 1 }))];

describe('the engine drives each row through its life', () => {
  it('journals `sending` before the try and the outcome after; a row done before is skipped unsent; a bad record is rejected unjournalled', async () => {
    const done = rowDigest({ Name: 'done', Status: 'Open' }, false);
    const fresh = rowDigest({ Name: 'new', Status: 'Open' }, false);
    const { journal, calls } = recordingJournal([{ line: 2, digest: done, state: 'created', id: 'old1', run: 0 }]);
    const items: CsvItem[] = [
      { kind: 'row', line: 2, values: ['done', 'Open'] },
      { kind: 'row', line: 3, values: ['new', 'Open'] },
      { kind: 'bad', line: 4, values: ['x'], reason: 'unclosed quote' },
    ];
    const { result, outcomes, sim } = await engineRun(items, COLUMNS, journal, (clock) => new SimService(clock));
    expect(calls).toEqual([
      ['sending', 3, fresh],
      ['created', 3, fresh, 'sim1'],
    ]);
    expect(outcomes.sort((a, b) => a.line - b.line).map((o) => [o.line, o.state, o.id, o.message])).toEqual([
      [2, 'skipped', 'old1', 'created in an earlier run'],
      [3, 'created', 'sim1', undefined],
      [4, 'rejected', undefined, 'unclosed quote'],
    ]);
    expect(result.summary).toMatchObject({ rows: 3, skipped: 1, created: 1, rejected: 1 });
    expect(sim.cards.map((c) => c.Name)).toEqual(['new']);
  });

  it('Always Create New: the first `_id` row probes alone, is checked, stops the run; the row waiting behind it leaves unsent', async () => {
    const { journal, calls } = recordingJournal();
    const items: CsvItem[] = [
      { kind: 'row', line: 2, values: ['c1', 'a', 'Done'] },
      { kind: 'row', line: 3, values: ['c2', 'b', 'Done'] },
    ];
    const { result, outcomes, sim } = await engineRun(items, ID_COLUMNS, journal, (clock) => {
      const s = new SimService(clock, { updateMode: 'Always Create New' });
      s.cards.push({ _id: 'c1', Name: 'a', Status: 'Open' }, { _id: 'c2', Name: 'b', Status: 'Open' });
      return s;
    });
    const d2 = rowDigest({ _id: 'c1', Name: 'a', Status: 'Done' }, false);
    const d3 = rowDigest({ _id: 'c2', Name: 'b', Status: 'Done' }, false);
    expect(calls).toEqual([
      ['sending', 2, d2],
      ['created', 2, d2, 'sim1'],
      ['sending', 3, d3],
      ['unsent', 3, d3],
    ]);
    expect(outcomes).toMatchObject([{ line: 2, state: 'created', id: 'sim1', message: 'board created a new card instead of updating c1' }]);
    expect(result.summary).toMatchObject({ rows: 1, created: 1, stopped: 'mode' });
    expect(result.fatal?.message).toMatch(/^Line 2 was posted with _id c1/);
    // One duplicate, not two: the second row never left.
    expect(sim.cards.map((c) => c._id)).toEqual(['c1', 'c2', 'sim1']);
  });
});
