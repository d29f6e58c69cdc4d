// The import engine in-process, in simulated time: the real engine, row sender, retry wrapper and rate
// gate over a fake service (test/helpers/sim.ts). Each run takes milliseconds of real time however many
// minutes of Retry-After, backoff and --give-up-after it simulates.
import { describe, expect, it } from 'vitest';
import { type EngineResult, runEngine } from '../../src/import/engine.js';
import { loadKeyIndex } from '../../src/import/match-index.js';
import type { ColumnMapping, CsvItem, ImportEvent, RowOutcome } from '../../src/import/types.js';
import { type SimClock, SimService, type SimServiceOptions, simApi, simClock } from '../helpers/sim.js';

const HEADERS = ['Name', 'Status'];
const COLUMNS: ColumnMapping[] = HEADERS.map((h, index) => ({ header: h, index, target: { kind: 'field', field: h }, how: 'own name' }));
const ID_COLUMNS: ColumnMapping[] = [
  { header: '_id', index: 0, target: { kind: 'id' }, how: 'id column' },
  { header: 'Status', index: 1, target: { kind: 'field', field: 'Status' }, how: 'own name' },
];

async function* rows(values: string[][]): AsyncGenerator<CsvItem> {
  for (let i = 0; i < values.length; i++) yield { kind: 'row', line: i + 2, values: values[i]! };
}

const named = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => [`${prefix}-${i + 1}`, 'Open']);

interface Run {
  clock: SimClock;
  service: SimService;
  result: EngineResult;
  outcomes: RowOutcome[];
  events: ImportEvent[];
}

/** Import `values` into a fresh simulated service; `abortAt` fires Ctrl-C at that simulated time. */
async function simulate(
  values: string[][],
  opts: SimServiceOptions & { matchOn?: string; columns?: ColumnMapping[]; giveUpAfterMs?: number; abortAt?: number; fixedRate?: number; seed?: number; service?: SimService; clock?: SimClock } = {},
): Promise<Run> {
  const clock = opts.clock ?? simClock(opts.seed);
  const service = opts.service ?? new SimService(clock, opts, opts.seed);
  const api = simApi(service, clock, opts.fixedRate);
  const outcomes: RowOutcome[] = [];
  const events: ImportEvent[] = [];
  const interrupt = new AbortController();
  if (opts.abortAt !== undefined) void clock.sleep(opts.abortAt).then(() => interrupt.abort());
  const result = await clock.run(
    (async () => {
      const match = opts.matchOn ? await loadKeyIndex(api, opts.matchOn, (opts.columns ?? COLUMNS).flatMap((c) => (c.target.kind === 'field' ? [c.target.field] : []))) : undefined;
      return runEngine(rows(values), {
        api,
        clock,
        columns: opts.columns ?? COLUMNS,
        sendEmpty: false,
        concurrency: 8,
        giveUpAfterMs: opts.giveUpAfterMs,
        match,
        signal: interrupt.signal,
        onEvent: (e) => {
          events.push(e);
          if (e.type === 'row') outcomes.push(e.outcome);
        },
      });
    })(),
  );
  return { clock, service, result, outcomes, events };
}

/**
 * The import's promise, checked against the service's state: one outcome per row; a created/updated row is
 * on the board exactly once under the reported id; an uncertain row at most once; a rejected row not at all.
 */
function expectAccounted(r: Run, values: string[][]) {
  expect(r.outcomes.map((o) => o.line).sort((a, b) => a - b)).toEqual(values.map((_, i) => i + 2));
  for (const o of r.outcomes) {
    const name = values[o.line - 2]![0]!;
    const n = r.service.count(name);
    if (o.state === 'created' || o.state === 'updated') {
      expect(n, `${name} ${o.state}`).toBe(1);
      expect(r.service.cards.find((c) => c.Name === name)?._id).toBe(o.id);
    } else if (o.state === 'uncertain') expect(n, `${name} uncertain`).toBeLessThanOrEqual(1);
    else expect(n, `${name} ${o.state}`).toBe(0);
  }
}

describe('import engine in simulated time', () => {
  it('under 1200/min with bursts of 5: every worker pauses on a 429, every row lands once, few 429s', async () => {
    const values = named(200, 'rl');
    const r = await simulate(values, { rateLimit: { perMinute: 1200, burst: 5 } });
    expectAccounted(r, values);
    expect(r.result.summary).toMatchObject({ rows: 200, created: 200 });
    const throttled = r.service.log.filter((l) => l.status === 429).length;
    expect(throttled).toBeGreaterThan(0);
    expect(throttled).toBeLessThan(30);
    expect(r.result.summary.waits).toBe(throttled);
    // 200 rows at 20/s after a burst of 5 cannot take under 9.75 s; the pacer learns the limit from 429s,
    // each of which pauses every worker for its Retry-After (1 s), so a short run stays well below it.
    expect(r.clock.now()).toBeGreaterThan(9750);
    expect(r.clock.now()).toBeLessThan(60_000);
  });

  it('one gate: with --rate 2/s the POSTs leave 500 ms apart, retries included', async () => {
    const values = named(6, 'fixed');
    const r = await simulate(values, { fixedRate: 2, faults: { unavailable: 0.3 }, seed: 3 });
    expectAccounted(r, values);
    const times = r.service.log.map((l) => l.at);
    const gaps = times.slice(1).map((t, i) => t - times[i]!);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(500);
    expect(gaps.filter((g) => g === 500).length).toBeGreaterThan(gaps.length / 2);
    // A second gate (the engine's own before the client's) would hold the first POST until every row had
    // taken a slot in it, and stretch the run by one slot per row.
    expect(times[0]!).toBeLessThan(500);
    // Each 503's wait of 1 s may be spread by up to 1 s more (retryWaitMs's jitter).
    const unavailable = r.service.log.filter((l) => l.status === 503).length;
    expect(r.clock.now()).toBeLessThan(times.length * 500 + 1000 + unavailable * 1000);
    expect(r.service.log.some((l) => l.status === 503)).toBe(true);
  });

  it.each([
    ['503', { unavailable: 0.2 }],
    ['500-after', { errorAfter: 0.1 }],
    ['reset', { reset: 0.1 }],
    ['reset-after', { resetAfter: 0.1 }],
    ['refused', { refused: 0.2 }],
  ] as const)('under %s faults every row is created once or reported', async (name, faults) => {
    const values = named(300, name);
    const r = await simulate(values, { faults });
    expectAccounted(r, values);
    const s = r.result.summary;
    expect(s.rows).toBe(300);
    // Faults that prove nothing was applied (503, refused) are repeated; the others may have been applied,
    // and are settled by reading the board for a card with the row's values, never by re-sending blindly.
    expect(s.created).toBe(300);
    expect(s.uncertain).toBe(0);
    expect(r.service.cards).toHaveLength(300);
    if (name === '503' || name === 'refused') expect(s.settled).toBe(0);
    else {
      expect(s.settled).toBeGreaterThan(0);
      expect(r.outcomes.filter((o) => o.settled)).toHaveLength(s.settled);
      if (name !== 'reset') expect(r.outcomes.some((o) => o.message?.startsWith('found on the board by content after'))).toBe(true);
    }
  });

  it('an _id that matches no card is never repeated blindly under 500s: one card per row (spec 4.3 rule 4)', async () => {
    const clock = simClock(5);
    const service = new SimService(clock, {}, 5);
    await simulate(named(40, 'k'), { service, clock });
    // Rows carrying ids that exist nowhere: each first try may create a new card under a new id.
    const values = Array.from({ length: 40 }, (_, i) => [`gone-${i + 1}`, `S${i + 1}`]);
    Object.assign(service.opts, { faults: { errorAfter: 0.5 } });
    const r = await simulate(values, { service, clock, columns: ID_COLUMNS, seed: 5 });
    const s = r.result.summary;
    expect(s.created + s.uncertain).toBe(40);
    expect(s.uncertain).toBe(0);
    expect(s.settled).toBeGreaterThan(0);
    // 40 seeded cards plus exactly one new card per row.
    expect(service.cards).toHaveLength(80);
    for (let i = 1; i <= 40; i++) expect(service.cards.filter((c) => c.Status === `S${i}`), `S${i}`).toHaveLength(1);
  });

  it('with --match-on, uncertain failures are re-checked on the board: every row exactly once', async () => {
    const values = named(120, 'm');
    const r = await simulate(values, { matchOn: 'Name', pageSize: 7, faults: { errorAfter: 0.1, resetAfter: 0.1, reset: 0.05, unavailable: 0.05 } });
    expectAccounted(r, values);
    expect(r.result.summary.created).toBe(120);
    expect(r.outcomes.some((o) => o.message?.startsWith('found on the board by its key after'))).toBe(true);
  });

  it('rows with an _id are repeated after an unknown outcome: updates land, no card is added', async () => {
    const clock = simClock();
    const service = new SimService(clock, {});
    const seed = await simulate(named(40, 'u'), { service, clock });
    const ids = seed.outcomes.sort((a, b) => a.line - b.line).map((o) => o.id!);
    Object.assign(service.opts, { faults: { errorAfter: 0.3, resetAfter: 0.1 } });
    const r = await simulate(ids.map((id) => [id, 'Done']), { service, clock, columns: ID_COLUMNS });
    expect(r.result.summary.updated).toBe(40);
    expect(service.cards).toHaveLength(40);
    expect(service.cards.every((c) => c.Status === 'Done')).toBe(true);
  });

  it('stops at once when a 429 asks to wait longer than --give-up-after leaves (Retry-After: 999999, 11.6 days)', async () => {
    const r = await simulate(named(20, 'h'), { always429: 999_999, giveUpAfterMs: 5000 });
    expect(r.result.fatal?.message).toMatch(/^The service asks to wait 11d 13h \(Retry-After\); --give-up-after 5s leaves 5s: stopped \(429 from POST /);
    expect(r.result.fatal?.exitCode).toBe(1);
    expect(r.result.summary.stopped).toBe('fatal');
    // No wait in simulated time (one answer's latency): every worker, the others paused by the gate, ended at once.
    expect(r.clock.now()).toBeLessThan(1000);
    // Only the first tries, sent before any answer came back (8 workers); nothing stored.
    expect(r.service.log.filter((l) => l.method === 'POST').length).toBeLessThanOrEqual(8);
    expect(r.service.cards).toHaveLength(0);
  });

  it('after --give-up-after of short 429 waits, the hint names the service limit and --rate (it paces this import)', async () => {
    const r = await simulate(named(5, 'k'), { always429: 1, giveUpAfterMs: 10_000 });
    expect(r.result.fatal?.message).toMatch(/^The service answered nothing but 429 for \d+s/);
    expect(r.result.fatal?.hint).toContain('120 requests a minute per API key, shared by all keys of a company');
    expect(r.result.fatal?.hint).toContain('--rate');
  });

  it('stops after --give-up-after when the service answers nothing but 429, with exit 1 and a resume hint', async () => {
    const r = await simulate(named(20, 'g'), { always429: 30, giveUpAfterMs: 15 * 60_000 });
    // It stops once a Retry-After (30 s) outlasts what --give-up-after leaves: waiting could not end in time.
    expect(r.result.fatal?.message).toMatch(/nothing but 429 for 14m\d+s and asks to wait 30s \(Retry-After\); --give-up-after 15m leaves \d+s: stopped/);
    expect(r.result.fatal?.exitCode).toBe(1);
    expect(r.result.fatal?.hint).toMatch(/resume/);
    expect(r.result.fatal?.hint).toContain('120 requests a minute per API key, shared by all keys of a company');
    // Stopped within the limit, not hours later: at the first 429 whose 30 s wait would end past it.
    expect(r.clock.now()).toBeGreaterThanOrEqual(15 * 60_000 - 30_000);
    expect(r.clock.now()).toBeLessThan(15 * 60_000);
    expect(r.service.cards).toHaveLength(0);
  });

  it.each([
    ['refused', { refused: 1 }],
    ['503', { unavailable: 1 }],
  ] as const)('a service that cannot be reached (%s) stops the run after the grace; rows not sent keep no state', async (_, faults) => {
    const r = await simulate(named(40, 'u'), { faults });
    // A 503's Retry-After (1 s) that would end past the grace stops the run then, with that wait named.
    expect(r.result.fatal?.message).toMatch(/could not be reached for (29|3\d)s .*; stopped\. Rows not sent keep no state\./);
    expect(r.result.fatal?.exitCode).toBe(1);
    expect(r.result.summary.stopped).toBe('fatal');
    // Nothing was refused by the server: no row is `rejected`, and none is journalled or reported at all.
    expect(r.outcomes).toEqual([]);
    expect(r.result.summary.rejected).toBe(0);
    // Stopped at the 30 s grace (or the last wait before it), not after minutes of rows each giving up.
    expect(r.clock.now()).toBeGreaterThanOrEqual(29_000);
    expect(r.clock.now()).toBeLessThan(45_000);
    expect(r.service.cards).toHaveLength(0);
  });

  it('a service away for less than the grace loses nothing: every row lands once', async () => {
    const clock = simClock();
    const service = new SimService(clock, { faults: { refused: 1 } });
    void clock.sleep(10_000).then(() => (service.opts.faults = {}));
    const r = await simulate(named(40, 'b'), { service, clock });
    expect(r.result.fatal).toBeUndefined();
    expect(r.result.summary.created).toBe(40);
    expectAccounted(r, named(40, 'b'));
  });

  it('stops at once when a 503 asks to wait longer than the grace (Retry-After: 999999), naming the wait', async () => {
    const clock = simClock();
    const service = new SimService(clock, { faults: { unavailable: 1 }, retryAfter: 999_999 });
    const r = await simulate(named(10, 'w'), { service, clock });
    expect(r.result.fatal?.message).toMatch(/could not be reached \(503.*\) and asks to wait 11d 13h \(Retry-After\), past the 30s an import waits for it; stopped/);
    expect(r.result.fatal?.exitCode).toBe(1);
    // One answer's latency, not 30 s of grace nor 11 days.
    expect(r.clock.now()).toBeLessThan(1000);
    expect(r.service.cards).toHaveLength(0);
  });

  it('Ctrl-C ends waits at once: a row backing off for a 30 s Retry-After does not hold the run', async () => {
    const clock = simClock();
    // Every request answers 503 with Retry-After 30: rows sit in their waits.
    const service = new SimService(clock, { faults: { unavailable: 1 }, retryAfter: 30 });
    const r = await simulate(named(10, 'c'), { service, clock, abortAt: 1000 });
    expect(r.result.summary.stopped).toBe('interrupted');
    expect(r.clock.now()).toBeLessThan(1100);
    // Rows interrupted in a wait never reached a state: a re-run takes them.
    expect(r.result.summary.rows).toBe(0);
  });
});
