// Exactly once by construction, attacked over real sockets: rows are known by the digest of what they
// send, one import runs per board, and a try that may have been applied is settled by reading the board.
// Every attack reads the board back: no card twice, none missing, or a clear refusal with nothing sent.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli } from '../commands/helpers.js';
import { tempDir } from '../helpers/cli.js';
import { BOARD_ID, CREATE_NEW_BOARD_ID, type RunningEmulator } from '../helpers/emulator.js';
import { lowJitter, nameCounts, readResults, spawnCli, start, until, writeCards } from './helpers.js';

/** Finished or started rows in a journal (lines after its header). */
const journalLines = (path: string) => {
  try {
    return readFileSync(path, 'utf8').split('\n').slice(1).filter((l) => /^\d+\t\w+\t/.test(l)).length;
  } catch {
    return 0;
  }
};

/** Every name `<prefix>-<i>` of the file on the board exactly once, and no other of that prefix. */
function expectExactlyOnce(e: RunningEmulator, prefix: string, n: number, board = BOARD_ID): void {
  const counts = new Map([...nameCounts(e, board)].filter(([name]) => name.startsWith(`${prefix}-`)));
  const twice = [...counts].filter(([, c]) => c > 1).map(([name]) => name);
  const missing = Array.from({ length: n }, (_, i) => `${prefix}-${i + 1}`).filter((name) => !counts.has(name));
  expect({ twice, missing }).toEqual({ twice: [], missing: [] });
  expect(counts.size).toBe(n);
}

describe('import: exactly once under attack', () => {
  it('an _id that matches no card, under 500-after: never repeated blindly; one new card per row', async () => {
    const e = await start();
    expect((await cli(e, ['import', writeCards(40, 'seed')])).code).toBe(0);
    const file = join(tempDir(), 'ids.csv');
    const lines = ['_id,Name,Status'];
    for (let i = 1; i <= 40; i++) lines.push(`${i <= 5 ? `gone${i}xxxxxxxxxxxx` : ''},id-${i},Open`);
    writeFileSync(file, `${lines.join('\n')}\n`);
    e.setFaults('500-after:0.5');
    // --concurrency 8: the rows in doubt share a read of the board. In file order (the default) each reads it
    // on its own, and with half of every request (GETs too) failing, a page now and then fails all its tries.
    const r = await cli(e, ['import', file, '--json', '--concurrency', '8'], lowJitter);
    e.setFaults(undefined);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ rows: 40, created: 40, uncertain: 0 });
    expectExactlyOnce(e, 'id', 40);
    expect(e.state()[BOARD_ID]!.cards).toHaveLength(80);
  });

  it('edited after Ctrl-C: the rows sent are skipped by content, the edited unsent row is sent; nothing twice', async () => {
    const e = await start({ faults: 'delay:60ms' });
    const file = writeCards(60, 'ed');
    const journal = join(tempDir(), 'ed.journal');
    const args = ['import', file, '--journal', journal, '--concurrency', '4'];
    const run = spawnCli(e, args);
    await until(() => journalLines(journal) >= 16);
    run.child.kill('SIGINT');
    expect(await run.ended).toEqual({ code: null, signal: 'SIGINT' });
    e.setFaults(undefined);
    // One cell of the last row changed (never sent), and the file saved with CRLF line ends.
    const text = readFileSync(file, 'utf8').replace('ed-60,Open', 'ed-60,Done');
    writeFileSync(file, text.replace(/\n/g, '\r\n'));
    const sent = e.state()[BOARD_ID]!.cards.length;
    const again = await cli(e, [...args, '--json']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain('was written for other content: rows are matched to it by content');
    expect(JSON.parse(again.stdout)).toMatchObject({ rows: 60, skipped: sent, created: 60 - sent });
    expectExactlyOnce(e, 'ed', 60);
    expect(e.state()[BOARD_ID]!.cards.find((c) => c.Name === 'ed-60')?.Status).toBe('Done');
  });

  it('edited after Ctrl-C: a row already sent and then changed is refused by its line, not sent twice', async () => {
    const e = await start({ faults: 'delay:60ms' });
    const file = writeCards(40, 'ch');
    const args = ['import', file, '--concurrency', '2'];
    const run = spawnCli(e, args);
    await until(() => e.state()[BOARD_ID]!.cards.length >= 6);
    run.child.kill('SIGINT');
    expect(await run.ended).toEqual({ code: null, signal: 'SIGINT' });
    e.setFaults(undefined);
    writeFileSync(file, readFileSync(file, 'utf8').replace('ch-1,Open', 'ch-1,Done'));
    const results = join(tempDir(), 'results.csv');
    const again = await cli(e, [...args, '--results', results]);
    expect(again.code).toBe(3);
    const row = readResults(results).find((x) => x.line === '2')!;
    expect(row).toMatchObject({ state: 'rejected', message: 'changed after it was sent (line 2): use --match-on or an _id column to update its card, or --again to send it as a new card' });
    expectExactlyOnce(e, 'ch', 40);
    expect(e.state()[BOARD_ID]!.cards.find((c) => c.Name === 'ch-1')?.Status).toBe('Open');
    // With a key the changed row is an update, as usual; the others are sent by key too, and found equal.
    const keyed = await cli(e, [...args, '--match-on', 'Name', '--json']);
    expect(keyed.code, keyed.stderr).toBe(0);
    expect(JSON.parse(keyed.stdout)).toMatchObject({ updated: 1, unchanged: 39, created: 0 });
    expect(e.state()[BOARD_ID]!.cards.find((c) => c.Name === 'ch-1')?.Status).toBe('Done');
  });

  it('stdin resumed after kill -9 with a new row first: the new row is sent, the others matched by content', async () => {
    const e = await start({ faults: 'delay:60ms' });
    const file = writeCards(50, 'in');
    const journal = join(tempDir(), 'stdin.journal');
    // --timeout 2s: the resume waits that long (the killed run's timeout) for its requests in flight.
    const args = ['--timeout', '2s', 'import', '-', '--journal', journal, '--concurrency', '4'];
    const run = spawnCli(e, args, file);
    await until(() => journalLines(journal) >= 20);
    run.child.kill('SIGKILL');
    await run.exit;
    e.setFaults(undefined);
    const [header, ...rows] = readFileSync(file, 'utf8').trim().split('\n');
    const shifted = `${[header, 'in-new,Open,"Owner, 0",P0', ...rows].join('\n')}\n`;
    const again = await cli(e, [...args, '--json'], { input: shifted });
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ rows: 51, uncertain: 0, rejected: 0 });
    const counts = nameCounts(e);
    expect(counts.get('in-new')).toBe(1);
    counts.delete('in-new');
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    expect(counts.size).toBe(50);
  });

  it.each([
    ['Update if exists', BOARD_ID],
    ['Always Create New', CREATE_NEW_BOARD_ID],
  ])('soak, %s: 300 rows under 500-after and reset-after, 3 × kill -9 and resume; every row once, all in --results', async (_mode, board) => {
    const e = await start({ faults: '500-after:0.1,reset-after:0.1,delay:20ms', faultSeed: 11 });
    const file = writeCards(300, 'soak');
    const journal = join(tempDir(), 'soak.journal');
    // --timeout 2s: a resume waits that long (the killed run's timeout) before reading for its rows in flight.
    const args = ['--timeout', '2s', 'import', file, '--journal', journal, '--concurrency', '8'];
    for (let kill = 1; kill <= 3; kill++) {
      const run = spawnCli(e, args, undefined, board);
      const target = journalLines(journal) + 60;
      await until(() => journalLines(journal) >= target || run.child.exitCode !== null);
      run.child.kill('SIGKILL');
      await run.exit;
    }
    const results = join(tempDir(), 'results.csv');
    const last = await cli(e, [...args, '--results', results, '--json'], { ...lowJitter, board });
    expect(last.code, last.stderr).toBe(0);
    const summary = JSON.parse(last.stdout);
    expect(summary).toMatchObject({ rows: 300, rejected: 0, uncertain: 0 });
    // Rows an earlier run's try stored, settled by this run, are `found`: this run did not add them.
    expect(summary.created + summary.skipped + summary.found).toBe(300);
    const res = readResults(results);
    expect(new Set(res.map((x) => x.line)).size).toBe(300);
    expect(res.every((x) => x.state === 'created' || x.state === 'skipped' || x.state === 'found')).toBe(true);
    expectExactlyOnce(e, 'soak', 300, board);
  });
});
