// The progress line and the summary once gave two rates for one run (76.9 vs 428.6 rows/s). One
// definition now (src/import/rate.ts): rows this run finished, not those `skipped` as done by an earlier
// run, over the seconds since the engine started. Simulated time, the real engine, progress and summary.
import { describe, expect, it } from 'vitest';
import { renderSummary, startProgress } from '../../src/commands/import/render.js';
import { createContext } from '../../src/context.js';
import { runEngine } from '../../src/import/engine.js';
import { type Journal, type JournalEntry, rowDigest } from '../../src/import/journal.js';
import { rowsPerSecond } from '../../src/import/rate.js';
import type { ColumnMapping, CsvItem } from '../../src/import/types.js';
import { BufferStream } from '../io/buffers.js';
import { SimService, simApi, simClock } from '../helpers/sim.js';

const COLUMNS: ColumnMapping[] = ['Name', 'Status'].map((h, index) => ({ header: h, index, target: { kind: 'field', field: h }, how: 'own name' }));

async function* rows(n: number): AsyncGenerator<CsvItem> {
  for (let i = 0; i < n; i++) yield { kind: 'row', line: i + 2, values: [`r-${i}`, 'Open'] };
}

/** A journal of an earlier run that finished the first `done` rows (the engine reads `previous` only). */
function resumedJournal(done: number): Journal {
  const previous: JournalEntry[] = [];
  // Each row as it was sent: the digest is of its body, as the engine computes it.
  for (let i = 0; i < done; i++) previous.push({ line: i + 2, digest: rowDigest({ Name: `r-${i}`, Status: 'Open' }, false), state: 'created', id: `old${i}`, run: 0 });
  return { previous, record() {}, sending() {}, ready: () => undefined, flush() {} } as unknown as Journal;
}

describe('one import rate for the progress line, the summary and --json', () => {
  it('rowsPerSecond: rows of this run over the seconds since the engine started', () => {
    expect(rowsPerSecond({ rows: 100, skipped: 40, elapsedMs: 2000 })).toBe(30);
    expect(rowsPerSecond({ rows: 100, skipped: 0, elapsedMs: 0 })).toBe(0);
  });

  it('a resumed run, started 5 s after its progress line: both say the same rate, the skipped rows not counted', async () => {
    const clock = simClock();
    const service = new SimService(clock, { latencyMs: 100 });
    const api = simApi(service, clock);
    const stderr = new BufferStream(false);
    const ctx = createContext({ clock, stderr, env: {}, globals: {} });
    const outputs = { json: false };
    const summary = await clock.run(
      (async () => {
        const progress = await startProgress(ctx, outputs, 40);
        await clock.sleep(5000); // opening the journal, the lock, a slow disk: not the engine's time
        const { summary } = await runEngine(rows(40), {
          api,
          clock,
          columns: COLUMNS,
          sendEmpty: false,
          concurrency: 2,
          journal: resumedJournal(10),
          signal: new AbortController().signal,
          onEvent: (e) => progress.event(e),
        });
        progress.done(summary);
        await renderSummary(ctx, summary, progress.problems, outputs);
        return summary;
      })(),
    );
    expect(summary).toMatchObject({ rows: 40, skipped: 10, created: 30 });
    const out = stderr.chunks.join('');
    const last = /✔ Importing: 40 \/ 40 rows · ([\d.]+) rows\/s/.exec(out);
    const told = /^rate +([\d.]+) rows\/s$/m.exec(out);
    expect(last, out).not.toBeNull();
    expect(told, out).not.toBeNull();
    // 30 rows sent 2 at a time, 100 ms each: 1.5 s, so 20 rows/s (not 40 / 1.5 s, nor 40 / 6.5 s).
    expect(summary.durationMs).toBe(1500);
    expect(told![1]).toBe('20.0');
    expect(last![1]).toBe(told![1]);
  });
});

describe('the progress line of a resumed run', () => {
  it('starts at the rows the journal holds and says it resumed; the skipped rows are not counted again', async () => {
    const clock = simClock();
    const service = new SimService(clock, { latencyMs: 1000 });
    const api = simApi(service, clock);
    const stderr = new BufferStream(false);
    const ctx = createContext({ clock, stderr, env: {}, globals: {} });
    await clock.run(
      (async () => {
        const progress = await startProgress(ctx, { json: false }, 40, 10);
        const { summary } = await runEngine(rows(40), {
          api,
          clock,
          columns: COLUMNS,
          sendEmpty: false,
          concurrency: 1,
          journal: resumedJournal(10),
          signal: new AbortController().signal,
          onEvent: (e) => progress.event(e),
        });
        progress.done(summary);
      })(),
    );
    const lines = stderr.text.split('\n').filter((l) => l.includes('Importing:'));
    expect(lines[0]).toBe('Importing: 10 / 40 rows (resumed at 10) · 0.0 rows/s · 0 retries · 0 waits (429)');
    // 30 rows a second apart: a plain line every 5 s, each from 10 up, never back to 0, never past 40.
    const counts = lines.map((l) => Number(/Importing: (\d+) \/ 40 rows \(resumed at 10\)/.exec(l)![1]));
    expect(counts.length).toBeGreaterThan(4);
    expect(counts.every((n, i) => n >= 10 && n <= 40 && (i === 0 || n >= counts[i - 1]!))).toBe(true);
    expect(counts.at(-1)).toBe(40);
    expect(lines.at(-1)).toMatch(/^✔ Importing: 40 \/ 40 rows \(resumed at 10\) · 1\.0 rows\/s · 0 retries · 0 waits \(429\)$/);
  });

  it('counts rows, retries and waits in words that agree: 0, 1 and 2', async () => {
    const stderr = new BufferStream(false);
    const ctx = createContext({ clock: simClock(), stderr, env: {}, globals: {} });
    const progress = await startProgress(ctx, { json: false }, undefined);
    const row = { type: 'row' as const, outcome: { line: 2, state: 'created' as const, id: 'x' } } as Parameters<typeof progress.event>[0];
    const retry = { type: 'retry' as const, line: 2, reason: '429', attempt: 1 };
    const base = { created: 0, updated: 0, found: 0, unchanged: 0, skipped: 0, rejected: 0, uncertain: 0, settled: 0, durationMs: 0, retries: 0, waits: 0 };
    progress.event(row);
    progress.event(retry);
    progress.done({ ...base, rows: 1, created: 1 });
    progress.event(row);
    progress.event(retry);
    progress.done({ ...base, rows: 2, created: 2 });
    const lines = stderr.text.split('\n').filter((l) => l !== '');
    expect(lines).toEqual([
      'Importing: 0 rows · 0.0 rows/s · 0 retries · 0 waits (429)',
      '✔ Importing: 1 row · 0.0 rows/s · 1 retry · 1 wait (429)',
      '✔ Importing: 2 rows · 0.0 rows/s · 2 retries · 2 waits (429)',
    ]);
  });
});
