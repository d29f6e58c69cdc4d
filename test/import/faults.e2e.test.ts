import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli } from '../commands/helpers.js';
import { tempDir } from '../helpers/cli.js';
import { BOARD_ID, type RunningEmulator } from '../helpers/emulator.js';
import { lowJitter, nameCounts, readResults, start, writeCards } from './helpers.js';

const ROWS = 60;

/**
 * The import's promise, checked against the emulator's state: every row has exactly one
 * result; a created/updated row is on the board exactly once under the reported _id; an uncertain row
 * is there at most once; a rejected row is not there; nothing else is on the board.
 */
function checkAccounted(e: RunningEmulator, results: string, prefix: string, rows = ROWS) {
  const res = readResults(results);
  expect(res.map((r) => Number(r.line)).sort((a, b) => a - b)).toEqual(Array.from({ length: rows }, (_, i) => i + 2));
  const counts = nameCounts(e);
  const cards = e.state()[BOARD_ID]!.cards;
  for (const r of res) {
    const name = `${prefix}-${Number(r.line) - 1}`;
    const n = counts.get(name) ?? 0;
    if (r.state === 'created' || r.state === 'updated') {
      expect(n, `${name} (${r.state})`).toBe(1);
      expect(cards.find((c) => c.Name === name)?._id).toBe(r._id);
    } else if (r.state === 'uncertain') {
      expect(n, `${name} (uncertain)`).toBeLessThanOrEqual(1);
    } else {
      expect(n, `${name} (${r.state})`).toBe(0);
    }
  }
  expect(cards.length).toBe([...counts.values()].reduce((a, b) => a + b, 0));
  expect([...counts.keys()].every((k) => k.startsWith(`${prefix}-`))).toBe(true);
  return res;
}

// Over real sockets, the faults only a real connection shows (a reset before or after the card is stored,
// a 500 after it): every kind, rates and the retry policy are covered in simulated time in engine.test.ts.
describe('cardboard import under faults: every row exactly once, or reported', () => {
  it.each([
    ['500-after:0.1', 500],
    ['reset:0.1', 0],
    ['reset-after:0.1', 0],
  ])('%s', async (faults, status) => {
    const e = await start({ faults });
    const file = writeCards(ROWS, 'f');
    const results = join(tempDir(), 'results.csv');
    const r = await cli(e, ['import', file, '--results', results, '--concurrency', '8'], { ...lowJitter, timeoutMs: 60_000 });
    expect(e.requests().some((q) => q.status === status)).toBe(true);
    const res = checkAccounted(e, results, 'f');
    // Rows whose try may have been applied are settled by reading the board: none is left in doubt.
    expect(res.filter((x) => x.state === 'uncertain')).toEqual([]);
    expect(r.code, r.stderr).toBe(0);
    expect(nameCounts(e).size).toBe(ROWS);
  });

  it('with --match-on, uncertain failures are re-checked on the board: all rows exactly once, exit 0', async () => {
    const e = await start({ faults: '500-after:0.1,reset-after:0.1,reset:0.05', pageSize: 7, faultSeed: 11 });
    const file = writeCards(24, 'm');
    const results = join(tempDir(), 'results.csv');
    const r = await cli(e, ['import', file, '--match-on', 'Name', '--results', results], { ...lowJitter, timeoutMs: 60_000 });
    expect(r.stderr).not.toContain('error:');
    expect(r.code).toBe(0);
    const res = checkAccounted(e, results, 'm', 24);
    expect(res.every((x) => x.state === 'created')).toBe(true);
    expect(res.some((x) => x.message.startsWith('found on the board by its key after'))).toBe(true);
  });

  it('rows with an _id are safe to repeat: updates under 500-after all land, no card is added', async () => {
    const e = await start();
    const file = writeCards(30, 'u');
    const created = join(tempDir(), 'created.csv');
    expect((await cli(e, ['import', file, '--results', created])).code).toBe(0);
    const ids = readResults(created).sort((a, b) => Number(a.line) - Number(b.line));
    const update = join(tempDir(), 'update.csv');
    writeFileSync(update, `_id,Status\n${ids.map((x) => `${x._id},Done`).join('\n')}\n`);
    // Six failed tries in a row leave a row uncertain: at 20 % that is 1 in 15,000 rows, never a flaky test.
    e.setFaults('500-after:0.2');
    const results = join(tempDir(), 'results.csv');
    const r = await cli(e, ['import', update, '--results', results], { ...lowJitter, timeoutMs: 60_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(readResults(results).every((x) => x.state === 'updated')).toBe(true);
    const cards = e.state()[BOARD_ID]!.cards;
    expect(cards).toHaveLength(30);
    expect(cards.every((c) => c.Status === 'Done')).toBe(true);
  });
});

// A try that may have been applied (a reset after the card was stored) is settled by reading the board
// for a card with the row's values, never by a blind re-send: no key is needed for exactly once.
describe('cardboard import: may-have-been-applied rows settled by reading the board', () => {
  it('reset-after at 30 %, no key: every name once, exit 0, the settled rows counted in --json and --results', async () => {
    const e = await start({ faults: 'reset-after:0.3', faultSeed: 7 });
    const file = writeCards(ROWS, 'rt');
    const results = join(tempDir(), 'results.csv');
    const r = await cli(e, ['import', file, '--results', results, '--json'], { ...lowJitter, timeoutMs: 60_000 });
    expect(r.code, r.stderr).toBe(0);
    const summary = JSON.parse(r.stdout);
    expect(summary).toMatchObject({ rows: ROWS, created: ROWS, uncertain: 0 });
    expect(summary.settled).toBeGreaterThan(0);
    const res = checkAccounted(e, results, 'rt');
    expect(res.filter((x) => x.settled === 'board')).toHaveLength(summary.settled);
    expect(res.some((x) => x.message.startsWith('found on the board by content after'))).toBe(true);
    const counts = nameCounts(e);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    expect(counts.size).toBe(ROWS);
  });
});
