// Rows in input order (concurrency 1): the gate alone, then the engine over the simulated service, where
// every request must be alone in flight (so each row's POST is answered, and its try settled, before the
// next row sends) and the cards must stand in the file's order, whatever the faults.
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONCURRENCY } from '../../src/commands/import/plan-from-flags.js';
import { runEngine } from '../../src/import/engine.js';
import { InOrder } from '../../src/import/in-order.js';
import { type Journal, type JournalEntry, rowDigest } from '../../src/import/journal.js';
import { loadKeyIndex } from '../../src/import/match-index.js';
import { SHIFT_WINDOW } from '../../src/import/resume.js';
import { type Row, startRow } from '../../src/import/row-life.js';
import type { ColumnMapping, CsvItem, RowOutcome } from '../../src/import/types.js';
import { type SimFaults, SimService, type SimServiceOptions, simApi, simClock } from '../helpers/sim.js';

const COLUMNS: ColumnMapping[] = ['Name', 'Status'].map((h, index) => ({ header: h, index, target: { kind: 'field', field: h }, how: 'own name' }));
const ID_COLUMNS: ColumnMapping[] = [{ header: '_id', index: 0, target: { kind: 'id' }, how: 'id column' }, ...COLUMNS.map((c) => ({ ...c, index: c.index + 1 }))];
const named = (n: number, prefix: string, from = 1) => Array.from({ length: n }, (_, i) => [`${prefix}-${i + from}`, 'Open']);

const at = (r: Row, phase: Row['phase']) => ((r.phase = phase), r);

describe('InOrder', () => {
  it('gives the turn to the oldest row alive; rows ending without one (skipped, rejected) do not hold it', async () => {
    const order = new InOrder();
    const [a, b, c] = [2, 3, 4].map((line) => startRow({ kind: 'row', line, values: [] }));
    for (const r of [a!, b!, c!]) order.add(r);
    expect(order.turn(at(a!, { at: 'sending' }))).toBeUndefined();
    // Reading and matching need no turn; sending does.
    expect(order.turn(at(c!, { at: 'prepared' }))).toBeUndefined();
    const cTurn = order.turn(at(c!, { at: 'sending' }));
    expect(cTurn).toBeInstanceOf(Promise);
    let cGoes = false;
    void cTurn!.then(() => (cGoes = true));
    order.end(b!);
    await Promise.resolve();
    expect(cGoes).toBe(false);
    order.end(a!);
    await Promise.resolve();
    expect(cGoes).toBe(true);
    expect(order.turn(c!)).toBeUndefined();
  });

  it('the reader waits while a row is alive, unless the oldest waits for a verdict (rows read later decide it)', async () => {
    const order = new InOrder();
    expect(order.readerMayGo()).toBeUndefined();
    const a = startRow({ kind: 'row', line: 2, values: [] });
    order.add(at(a, { at: 'sending' }));
    const wait = order.readerMayGo();
    expect(wait).toBeInstanceOf(Promise);
    at(a, { at: 'deciding', decided: new Promise(() => {}) });
    order.changed();
    await wait;
    expect(order.readerMayGo()).toBeUndefined();
  });
});

/** A journal stub holding an earlier run's records; what this run writes is dropped. */
function journalOf(previous: JournalEntry[]): Journal {
  return { previous, sameContent: () => true, sending() {}, unsent() {}, record() {}, ready: () => undefined, flush() {} } as unknown as Journal;
}

/**
 * Import `values` at the default concurrency (1) into a simulated service; every request must be alone in flight. Returns
 * the outcomes, the service, and how many rows the reader had read when each POST left.
 */
async function inOrder(values: string[][], opts: SimServiceOptions & { columns?: ColumnMapping[]; matchOn?: string; journal?: Journal; seed?: number; service?: (s: SimService) => void } = {}) {
  const clock = simClock(opts.seed);
  const service = new SimService(clock, opts, opts.seed);
  opts.service?.(service);
  const send = service.send;
  let inFlight = 0;
  let maxInFlight = 0;
  let read = 0;
  const readAtPost: number[] = [];
  // Every request, counted while it is on its way: at concurrency 1, never two at once.
  (service as { send: typeof send }).send = async (req) => {
    if (req.method === 'POST') readAtPost.push(read);
    maxInFlight = Math.max(maxInFlight, ++inFlight);
    try {
      return await send(req);
    } finally {
      inFlight--;
    }
  };
  const api = simApi(service, clock);
  async function* items(): AsyncGenerator<CsvItem> {
    for (let i = 0; i < values.length; i++) {
      read++;
      yield { kind: 'row', line: i + 2, values: values[i]! };
    }
  }
  const outcomes: RowOutcome[] = [];
  const columns = opts.columns ?? COLUMNS;
  const result = await clock.run(
    (async () => {
      const match = opts.matchOn ? await loadKeyIndex(api, opts.matchOn, ['Name', 'Status']) : undefined;
      maxInFlight = 0;
      return runEngine(items(), {
        api,
        clock,
        columns,
        sendEmpty: false,
        concurrency: DEFAULT_CONCURRENCY,
        match,
        journal: opts.journal,
        signal: new AbortController().signal,
        onEvent: (e) => e.type === 'row' && outcomes.push(e.outcome),
      });
    })(),
  );
  return { result, outcomes, service, maxInFlight, readAtPost };
}

describe('the engine at the default concurrency: one request at a time, cards in file order', () => {
  it.each<[string, SimFaults | undefined, SimServiceOptions]>([
    ['no fault', undefined, {}],
    ['503', { unavailable: 0.2 }, {}],
    ['500 after storing', { errorAfter: 0.15 }, {}],
    ['reset before storing', { reset: 0.15 }, {}],
    ['reset after storing', { resetAfter: 0.15 }, {}],
    ['refused', { refused: 0.2 }, {}],
    ['120/min, bursts of 20', undefined, { rateLimit: { perMinute: 120, burst: 20 } }],
  ])('%s', async (_name, faults, extra) => {
    const values = named(60, 'r');
    const r = await inOrder(values, { faults, pageSize: 7, ...extra });
    expect(r.result.summary).toMatchObject({ rows: 60, created: 60, uncertain: 0 });
    expect(r.maxInFlight).toBe(1);
    expect(r.service.cards.map((c) => c.Name)).toEqual(values.map((v) => v[0]));
  });

  it('with --match-on under faults: updates and creates interleaved, new cards in file order', async () => {
    const values = named(40, 'k');
    const r = await inOrder(values, {
      matchOn: 'Name',
      faults: { errorAfter: 0.1, reset: 0.1, resetAfter: 0.1 },
      pageSize: 7,
      // Every third row's card is on the board already, in another order: those rows are updates.
      service: (s) => {
        for (let i = 39; i >= 0; i -= 3) s.cards.push({ _id: `old${i}`, Name: `k-${i + 1}`, Status: 'Done' });
      },
    });
    expect(r.result.summary).toMatchObject({ rows: 40, uncertain: 0, rejected: 0 });
    expect(r.maxInFlight).toBe(1);
    const fresh = r.service.cards.filter((c) => !String(c._id).startsWith('old'));
    expect(fresh.map((c) => c.Name)).toEqual(values.map((v) => v[0]).filter((_, i) => i % 3 !== 0));
    expect(r.service.cards.every((c) => c.Status === 'Open')).toBe(true);
  });

  it('`_id` rows, some naming no card (created) under the Update Mode probe: new cards in file order', async () => {
    const values = Array.from({ length: 20 }, (_, i) => [i % 2 ? `c${i}` : `gone${i}`, `n-${i + 1}`, 'Done']);
    const r = await inOrder(values, {
      columns: ID_COLUMNS,
      faults: { errorAfter: 0.1 },
      service: (s) => {
        for (let i = 19; i >= 0; i--) if (i % 2) s.cards.push({ _id: `c${i}`, Name: `n-${i + 1}`, Status: 'Open' });
      },
    });
    expect(r.result.summary).toMatchObject({ rows: 20, uncertain: 0 });
    expect(r.maxInFlight).toBe(1);
    const fresh = r.service.cards.filter((c) => String(c._id).startsWith('sim'));
    expect(fresh.map((c) => c.Name)).toEqual(values.filter((_, i) => i % 2 === 0).map((v) => v[1]));
  });

  it('a resumed run whose first row waits for a verdict reads ahead only as far as the verdict needs, then goes in order', async () => {
    // The earlier run created a card for line 2; line 2 now holds other content, and no later row is that record's.
    const journal = journalOf([{ line: 2, digest: rowDigest({ Name: 'was', Status: 'Open' }, false), state: 'created', id: 'c-was', run: 0 }]);
    const values = [['edited', 'Open'], ...named(SHIFT_WINDOW + 500, 'n')];
    const r = await inOrder(values, { journal });
    expect(r.outcomes.find((o) => o.line === 2)).toMatchObject({ state: 'rejected', message: expect.stringMatching(/^changed after it was sent \(line 2\)/) });
    expect(r.result.summary).toMatchObject({ rows: values.length, created: values.length - 1, rejected: 1 });
    expect(r.maxInFlight).toBe(1);
    expect(r.service.cards.map((c) => c.Name)).toEqual(values.slice(1).map((v) => v[0]));
    // The verdict came once the reader was SHIFT_WINDOW rows past line 2; nothing was sent before it.
    expect(r.readAtPost[0]).toBeGreaterThanOrEqual(SHIFT_WINDOW);
    expect(r.readAtPost[0]).toBeLessThan(SHIFT_WINDOW + 10);
  });

  it('rows inserted above rows sent before wait for the verdict on their line, and are created in file order', async () => {
    // The earlier run created a, b, c at lines 2-4; x and p-1 … p-20 are inserted above them, y appended.
    // x, p-1 and p-2 stand at lines whose record holds a card: each is new once a later row claims it.
    const d = (name: string) => rowDigest({ Name: name, Status: 'Open' }, false);
    const journal = journalOf(['a', 'b', 'c'].map((name, i) => ({ line: i + 2, digest: d(name), state: 'created', id: `c-${name}`, run: 0 })));
    const inserted = [['x', 'Open'], ...named(20, 'p')];
    const r = await inOrder([...inserted, ['a', 'Open'], ['b', 'Open'], ['c', 'Open'], ['y', 'Open']], { journal });
    expect(r.result.summary).toMatchObject({ rows: 25, created: 22, skipped: 3 });
    expect(r.maxInFlight).toBe(1);
    expect(r.service.cards.map((c) => c.Name)).toEqual([...inserted.map((v) => v[0]), 'y']);
  });
});
