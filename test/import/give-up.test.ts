// --give-up-after against a key that stays rate-limited, in simulated time: the rule behind the
// end-to-end run of give-up.e2e.test.ts (a 429 with Retry-After: 1 for ever, --give-up-after 2s), whose
// real clock can only show that the message is consistent with itself. Here each run's waits are known: the
// service asks for 4 s, so the jitter (a quarter of the wait, at most a second) spans a whole second.
import { describe, expect, it } from 'vitest';
import { runEngine } from '../../src/import/engine.js';
import type { ColumnMapping, CsvItem } from '../../src/import/types.js';
import { SimService, simApi, simClock } from '../helpers/sim.js';

const COLUMNS: ColumnMapping[] = [{ header: 'Name', index: 0, target: { kind: 'field', field: 'Name' }, how: 'own name' }];

async function* rows(n: number): AsyncGenerator<CsvItem> {
  for (let i = 0; i < n; i++) yield { kind: 'row', line: i + 2, values: [`throttled-${i + 1}`] };
}

/** One import of 5 rows, one at a time, against a service answering every POST 429 Retry-After: 4; `seed` drives the jitter. */
async function throttledImport(seed: number) {
  const clock = simClock(seed);
  const service = new SimService(clock, { always429: 4, latencyMs: 5 });
  const result = await clock.run(runEngine(rows(5), { api: simApi(service, clock), clock, columns: COLUMNS, sendEmpty: false, concurrency: 1, giveUpAfterMs: 5000, signal: new AbortController().signal, onEvent: () => {} }));
  const posts = service.log.filter((l) => l.method === 'POST');
  return { result, posts, message: result.fatal?.message ?? '' };
}

describe('--give-up-after 5s against nothing but 429 Retry-After: 4', () => {
  it('waits Retry-After plus its jitter, then stops at the 429 whose next wait would end past the limit, and says so consistently', async () => {
    const spells: number[] = [];
    const said = new Set<string>();
    for (let seed = 1; seed <= 40; seed++) {
      const { result, posts, message } = await throttledImport(seed);
      expect(result.fatal?.exitCode, message).toBe(1);
      expect(result.summary.stopped).toBe('fatal');
      // The first 429 paused the import for the (floored) Retry-After plus jitter; the next try met a 429 too.
      expect(posts.map((p) => p.status)).toEqual([429, 429]);
      const spell = posts[1]!.at - posts[0]!.at;
      // The wait itself is 4000 + [0, 1000) ms; the second try's answer adds its latency (5 ms).
      expect(spell, message).toBeGreaterThanOrEqual(4000 + 5);
      expect(spell, message).toBeLessThan(5000 + 5);
      spells.push(spell);
      if (spell >= 5000) {
        // The spell reached the limit itself.
        expect(message).toMatch(/^The service answered nothing but 429 for 5s; stopped \(429 from POST /);
        said.add('5s; stopped');
      } else {
        // What is left (5000 - spell) is less than the 4 s the server asks: waiting could not end in time.
        const m = /^The service answered nothing but 429 for (\d+)s and asks to wait 4s \(Retry-After\); --give-up-after 5s leaves (\d+)ms: stopped \(429 from POST /.exec(message);
        expect(m, message).not.toBeNull();
        const seconds = Math.round(spell / 1000);
        expect(Number(m![1])).toBe(seconds);
        expect(Number(m![2])).toBe(5000 - spell);
        said.add(`${seconds}s`);
      }
    }
    // The jitter spreads the waits over the whole second: both roundings of the spell are reported.
    expect(Math.max(...spells) - Math.min(...spells)).toBeGreaterThan(500);
    expect([...said].sort()).toEqual(expect.arrayContaining(['4s', '5s']));
  });
});
