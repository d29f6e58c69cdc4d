// Reading the board for --match-on. Uncertain creates are re-checked in batches (one
// read for every row waiting), and a card seen twice counts once (a repeating page: test/api/pages.test.ts).
// In-process over the fake service, in simulated time (test/helpers/sim.ts).
import { describe, expect, it } from 'vitest';
import type { Api } from '../../src/api/types.js';
import { runEngine } from '../../src/import/engine.js';
import { loadKeyIndex, lookupCard } from '../../src/import/match-index.js';
import type { ColumnMapping, CsvItem, RowOutcome } from '../../src/import/types.js';
import type { Card } from '../../src/spec-types.js';
import { SimService, simApi, simClock } from '../helpers/sim.js';

const COLUMNS: ColumnMapping[] = ['Name', 'Status'].map((h, index) => ({ header: h, index, target: { kind: 'field', field: h }, how: 'own name' }));

async function* rows(n: number): AsyncGenerator<CsvItem> {
  for (let i = 1; i <= n; i++) yield { kind: 'row', line: i + 1, values: [`new-${i}`, 'Open'] };
}

/** An Api whose pages are given (for the read checks): page N is `pages[N]`, [] after. */
function pagedApi(pages: Card[][]): Api {
  return {
    async *cardPages() {
      for (const p of pages) {
        if (p.length === 0) return;
        yield p;
      }
    },
  } as unknown as Api;
}

describe('--match-on: the board read', () => {
  it('re-checks 500 uncertain-prone rows onto a 20,000-card board in at most 3 reads: no duplicate, no lost row', async () => {
    const clock = simClock(3);
    const service = new SimService(clock, { pageSize: 100, faults: { errorAfter: 0.1 } }, 3);
    for (let i = 1; i <= 20_000; i++) service.cards.push({ _id: `old${i}`, Name: `old-${i}`, Status: 'Open' });
    const api = simApi(service, clock);
    let reads = 0;
    const counted: typeof api = { ...api, cardPages: (o) => (reads++, api.cardPages(o)) };
    const outcomes: RowOutcome[] = [];
    const result = await clock.run(
      (async () => {
        const match = await loadKeyIndex(counted, 'Name', ['Name', 'Status']);
        return runEngine(rows(500), { api: counted, clock, columns: COLUMNS, sendEmpty: false, concurrency: 8, match, signal: new AbortController().signal, onEvent: (e) => e.type === 'row' && outcomes.push(e.outcome) });
      })(),
    );
    const gets = service.log.filter((l) => l.method === 'GET').length;
    expect(reads - 1).toBeGreaterThan(0); // some creates did fail uncertainly
    expect(reads - 1).toBeLessThanOrEqual(3);
    // Every page of each read (20,500 cards / 100, plus the empty end), and the retries of 500s on GETs.
    expect(gets).toBeLessThanOrEqual(4 * 207 * 1.25);
    expect(result.summary).toMatchObject({ rows: 500, created: 500, uncertain: 0, rejected: 0 });
    expect(outcomes.filter((o) => o.message?.startsWith('found on the board by its key after')).length).toBeGreaterThan(20);
    for (let i = 1; i <= 500; i++) expect(service.count(`new-${i}`)).toBe(1);
    expect(service.cards).toHaveLength(20_500);
  });

  it('counts a card seen on two pages once, without calling its key ambiguous', async () => {
    const a: Card = { _id: 'a', Name: 'A', Status: 'Open' };
    const b: Card = { _id: 'b', Name: 'B', Status: 'Open' };
    const c: Card = { _id: 'c', Name: 'C', Status: 'Done' };
    // A card landed on top between the two reads: `b` moved from page 0 to page 1.
    const index = await loadKeyIndex(pagedApi([[a, b], [b, c]]), 'Name', ['Name', 'Status']);
    expect(index.cards).toBe(3);
    expect(index.ambiguous.size).toBe(0);
    expect(lookupCard(index, 'B')?.id).toBe('b');
    const twoCards = await loadKeyIndex(pagedApi([[a, { ...b, _id: 'b2', Name: 'A' }]]), 'Name', ['Name']);
    expect(twoCards.ambiguous.get('A')).toEqual({ ids: ['a', 'b2'], count: 2 });
  });
});
