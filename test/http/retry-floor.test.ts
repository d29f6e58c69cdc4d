// No retry storms: whatever a 429's Retry-After says (0, a date already past, a negative number, garbage,
// nothing), every retry waits at least the floor, so a server answering "now" forever gets no more
// requests than the budget allows. In simulated time (the real retry wrapper, rate gate and import row
// policy over a fake service), then over HTTP against a real local server.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { classify, RETRY_FLOOR_MS, retryWaitMs } from '../../src/http/failure.js';
import { DEFAULT_RETRY, retryDelay, waitLine } from '../../src/http/command-policy.js';
import { ApiError } from '../../src/errors.js';
import { type Clock, realClock } from '../../src/clock.js';
import { runEngine } from '../../src/import/engine.js';
import type { ColumnMapping, CsvItem } from '../../src/import/types.js';
import { runMain, tempDir } from '../helpers/cli.js';
import { hostileEnv, useHostileServer } from '../helpers/hostile-server.js';
import { SimService, simApi, simClock } from '../helpers/sim.js';

/** Retry-After values that all mean "now" or nothing usable. The sim clock starts at the epoch: this date is before it. */
const PAST = new Date(-60_000).toUTCString();
const HEADERS: [string, string][] = [
  ['0', '0'],
  ['a date in the past', PAST],
  ['-5', '-5'],
  ['garbage', 'soon, maybe'],
  ['empty', ''],
];

/** The floor docs/boards-and-credentials.md promises: a second between tries of a declined request. */
const FLOOR_MS = 1000;

/** Time between consecutive entries. */
const gaps = (times: number[]) => times.slice(1).map((t, i) => t - times[i]!);

describe.each(HEADERS)('a server answering every request 429 with Retry-After: %s (simulated time)', (_name, header) => {
  it('a single command: no more tries than the budget allows, every wait at least the floor', async () => {
    const clock = simClock(3);
    const service = new SimService(clock, { always429: header });
    const api = simApi(service, clock);
    const err = await clock.run(api.getSchema()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    const tries = service.log.map((l) => l.at);
    expect(tries.length).toBeGreaterThan(1);
    expect(tries.length).toBeLessThanOrEqual(DEFAULT_RETRY.maxThrottledTries);
    expect(tries.length).toBeLessThanOrEqual(1 + DEFAULT_RETRY.maxWaitMs / FLOOR_MS);
    for (const gap of gaps(tries)) expect(gap).toBeGreaterThanOrEqual(FLOOR_MS);
  });

  it('an import (engine, rate gate, row policy, 8 workers): at most one try per worker per floor, stopped by --give-up-after', async () => {
    const clock = simClock(4);
    const service = new SimService(clock, { always429: header });
    const api = simApi(service, clock);
    const columns: ColumnMapping[] = [{ header: 'Name', index: 0, target: { kind: 'field', field: 'Name' }, how: 'own name' }];
    async function* rows(): AsyncGenerator<CsvItem> {
      for (let i = 0; i < 20; i++) yield { kind: 'row', line: i + 2, values: [`storm-${i}`] };
    }
    const concurrency = 8;
    const giveUpAfterMs = 20_000;
    const result = await clock.run(
      runEngine(rows(), { api, clock, columns, sendEmpty: false, concurrency, giveUpAfterMs, signal: new AbortController().signal, onEvent: () => {} }),
    );
    expect(result.fatal?.message).toMatch(/429/);
    const posts = service.log.filter((l) => l.method === 'POST').map((l) => l.at);
    expect(posts.length).toBeLessThanOrEqual(concurrency * (1 + giveUpAfterMs / FLOOR_MS));
    // No more than one try per worker in any window of the floor: each worker waited at least the floor.
    for (let i = 0; i + concurrency < posts.length; i++) expect(posts[i + concurrency]! - posts[i]!).toBeGreaterThanOrEqual(FLOOR_MS);
  });
});

describe('the one wait of a declined request (retryWaitMs)', () => {
  const limited = (retryAfter: number | undefined, status = 429) => new ApiError(`${status}`, { method: 'GET', url: 'u', status, retryAfter });

  it('is at least the floor, with jitter, for a Retry-After of 0 or none; a longer one is honoured', () => {
    expect(RETRY_FLOOR_MS).toBe(FLOOR_MS);
    for (const r of [0, undefined]) {
      for (const status of [429, 503]) {
        const waits = [0, 0.5, 0.999].map((x) => retryWaitMs(classify(limited(r, status)), 0, () => x));
        for (const w of waits) expect(w).toBeGreaterThanOrEqual(RETRY_FLOOR_MS);
        if (r === 0) expect(new Set(waits).size).toBe(3);
      }
    }
    expect(retryWaitMs(classify(limited(7)), 0, () => 0)).toBe(7000);
    // A failure the server did not decline keeps its backoff (its tries are counted).
    expect(retryWaitMs(classify(new ApiError('reset', { method: 'GET', url: 'u', code: 'ECONNRESET' })), 123, () => 0)).toBe(123);
  });

  it('the retry decision of a command never answers less than the floor for a declined request', () => {
    const state = { throttledTries: 0, waitedMs: 0 };
    for (const r of [0, undefined]) expect(retryDelay(limited(r), { method: 'GET', path: '/x' }, 1, DEFAULT_RETRY, () => 0, state)).toBeGreaterThanOrEqual(FLOOR_MS);
    expect(retryDelay(limited(0, 503), { method: 'GET', path: '/x' }, 1, DEFAULT_RETRY, () => 0, state)).toBeGreaterThanOrEqual(FLOOR_MS);
  });

  it('says the floor was waited instead of a Retry-After of 0', () => {
    expect(waitLine(limited(0), 1400)).toBe('Rate limited (429); waiting 1.4s (Retry-After: 0s; cardboard waits at least 1s, plus jitter), then trying again…');
  });
});

describe('over HTTP: a server answering 429 with Retry-After: <a date in the past>', () => {
  const hostile = useHostileServer(afterEach);

  it('card put sends a handful of requests in 3 s, not a storm, waiting at least the floor before each retry (time skipped, not slept)', async () => {
    const s = await hostile('past-retry-after');
    // The command's clock: each sleep moves its time on at once. Once 3 s have passed, the server lets the next try through.
    const waited: number[] = [];
    let skipped = 0;
    let seenIn3s: number | undefined;
    const clock: Clock = {
      ...realClock,
      now: () => Date.now() + skipped,
      sleep: async (ms) => {
        waited.push(ms);
        skipped += ms;
        if (skipped >= 3000 && seenIn3s === undefined) {
          seenIn3s = s.requests.length;
          s.setMode('plain');
        }
      },
    };
    const r = await runMain(['card', 'put', 'Title=x'], { env: hostileEnv(s), context: () => ({ clock }) });
    expect(r.code, r.stderr).toBe(0);
    // At least the floor between tries: 3 declined tries in 3 s (with no floor, the try cap's worth at once).
    expect(seenIn3s).toBeLessThanOrEqual(3);
    // Each declined try was followed by a wait of at least the floor.
    expect(waited.filter((ms) => ms >= FLOOR_MS)).toHaveLength(seenIn3s!);
    expect(r.stderr).toMatch(/Rate limited \(429\); waiting \d(\.\d)?s \(Retry-After: 0s; cardboard waits at least 1s/);
  });

  it('import sends a handful of POSTs before --give-up-after 3s stops it, not a storm', async () => {
    const s = await hostile('past-retry-after', { retryAfterMethods: ['POST'] });
    const dir = tempDir();
    const input = join(dir, 'in.csv');
    writeFileSync(input, 'Title,Status\na,Open\nb,Open\n');
    const r = await runMain(['import', input, '--give-up-after', '3s', '--concurrency', '1'], { env: hostileEnv(s), cwd: dir });
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/429/);
    // About one POST a second for 3 s (hundreds without a floor). An upper bound only.
    expect(s.requests.filter((q) => q.method === 'POST').length).toBeLessThanOrEqual(6);
  });
});
