import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli } from '../commands/helpers.js';
import { tempDir } from '../helpers/cli.js';
import { BOARD_ID } from '../helpers/emulator.js';
import { boardLockPath, serverIdentity } from '../../src/import/board-lock.js';
import { nameCounts, posts, readResults, spawnCli, start, until, writeCards } from './helpers.js';

const ROWS = 60;
const CONCURRENCY = 4;

/** Rows of a journal file (its first line is the header): finished, and sent with no outcome written (in flight). */
function journalled(path: string): { finished: number; inFlight: number } {
  if (!existsSync(path)) return { finished: 0, inFlight: 0 };
  const last = new Map<string, string>();
  for (const l of readFileSync(path, 'utf8').split('\n').slice(1)) {
    const [line, state, , digest] = l.split('\t');
    if (digest !== undefined && /^[0-9a-f]{16}$/.test(digest)) last.set(`${line}\t${digest}`, state!);
  }
  const states = [...last.values()];
  // `unsent`: a try that never left (Ctrl-C while it waited): neither finished nor in flight.
  return { finished: states.filter((x) => x !== 'sending' && x !== 'unsent').length, inFlight: states.filter((x) => x === 'sending').length };
}
const journalRows = (path: string) => journalled(path).finished;

describe('cardboard import: resume', () => {
  it('after kill -9, a re-run skips the journalled rows and settles the rows in flight by reading the board: no duplicate', async () => {
    // Each request is held 500 ms before it is stored: the rows in flight at the kill land after it, and a
    // re-run that read the board at once would miss them and send them again.
    const e = await start({ faults: 'delay:500ms' });
    const file = writeCards(ROWS, 'k');
    const journal = join(tempDir(), 'import.journal');
    // --timeout 3s: longer than a request is held; the re-run waits that long (the killed run's timeout) for the rows in flight.
    const args = ['--timeout', '3s', 'import', file, '--journal', journal, '--concurrency', String(CONCURRENCY)];
    const run = spawnCli(e, args);
    await until(() => journalRows(journal) >= 12);
    run.child.kill('SIGKILL');
    await run.exit;
    const { finished, inFlight } = journalled(journal);
    const before = e.state()[BOARD_ID]!.cards.length;
    expect(before).toBeLessThan(ROWS);
    // Every row that may be on the board is in the journal: sent ones have at least their `sending` record.
    expect(finished + inFlight).toBeGreaterThanOrEqual(before);

    e.setFaults(undefined);
    const results = join(tempDir(), 'results.csv');
    const again = await cli(e, [...args, '--results', results, '--json']);
    expect(again.code).toBe(0);
    const summary = JSON.parse(again.stdout);
    expect(summary.rows).toBe(ROWS);
    expect(summary.skipped).toBe(finished);
    expect(summary.settled).toBe(inFlight);
    expect(summary.uncertain).toBe(0);
    expect(readResults(results).filter((r) => r.state === 'skipped')).toHaveLength(finished);
    expect(again.stderr).toContain(`Resuming: ${finished} row${finished === 1 ? '' : 's'} already finished`);
    if (inFlight > 0) expect(again.stderr).toContain(`${inFlight} row${inFlight === 1 ? '' : 's'} may have been applied`);
    const counts = nameCounts(e);
    expect(counts.size).toBe(ROWS);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    expect(e.state()[BOARD_ID]!.cards.length).toBe(ROWS);
  });

  it('Ctrl-C before the first row (reading the schema) stops at once, by SIGINT: it is never swallowed', async () => {
    const e = await start({ faults: 'delay:30s' });
    const run = spawnCli(e, ['import', writeCards(5, 'early'), '--match-on', 'Name']);
    await until(() => e.requests().length > 0); // the schema GET is held by the delay
    run.child.kill('SIGINT');
    expect(await run.ended).toEqual({ code: null, signal: 'SIGINT' });
    expect(run.output().stderr).toContain('error: Interrupted.');
    expect(posts(e)).toBe(0);
  });

  it('Ctrl-C lets requests in flight finish, journals them, then ends by SIGINT; the re-run completes with no duplicate', async () => {
    const e = await start({ faults: 'delay:100ms' });
    const file = writeCards(ROWS, 'c');
    const args = ['import', file, '--concurrency', String(CONCURRENCY)];
    const run = spawnCli(e, args);
    const journalDir = join(dirname(file), '.cardboard-journal');
    const log = () => readdirSync(journalDir).find((n) => n.endsWith('.log'));
    const journal = () => (existsSync(journalDir) ? join(journalDir, log() ?? 'none') : '');
    await until(() => journalRows(journal()) >= 8);
    run.child.kill('SIGINT');
    expect(await run.ended).toEqual({ code: null, signal: 'SIGINT' });
    const out = run.output();
    expect(out.stderr).toContain('Interrupted: finishing the requests in flight');
    expect(out.stderr).toMatch(/error: Interrupted after \d+ rows\./);
    expect(out.stderr).toContain('hint: Run the same command again to resume');
    expect(journal()).toMatch(new RegExp(`c\\.csv\\.${BOARD_ID}\\.[0-9a-f]{8}\\.[0-9a-f]{8}\\.log$`));
    expect(out.stderr).toContain(`hint: Run the same command again to resume: cardboard import ${file} --concurrency ${CONCURRENCY}`);
    // Every row sent so far finished and was journalled before the exit.
    expect(journalRows(journal())).toBe(e.state()[BOARD_ID]!.cards.length);

    const done = journalRows(journal());
    e.setFaults(undefined);
    const again = await cli(e, [...args, '--json']);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ rows: ROWS, skipped: done, created: ROWS - done });
    const counts = nameCounts(e);
    expect(counts.size).toBe(ROWS);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
  });

  it('a finished run is remembered: rows with a --match-on key are sent by key again (unchanged), nothing is duplicated', async () => {
    const e = await start();
    const file = writeCards(5, 'r');
    const args = ['import', file, '--map', 'Owner=Owner', '--match-on', 'Name', '--json'];
    expect((await cli(e, args)).code).toBe(0);
    expect(readdirSync(join(dirname(file), '.cardboard-journal'))).toHaveLength(1);
    const again = JSON.parse((await cli(e, args)).stdout);
    expect(again).toMatchObject({ rows: 5, skipped: 0, created: 0 });
    // `unchanged` when only changes are sent (--match-on); `updated` without it.
    expect((again.updated ?? 0) + (again.unchanged ?? 0)).toBe(5);
    expect(e.state()[BOARD_ID]!.cards).toHaveLength(5);
  });

  it('a corrected mapping is applied on the second run', async () => {
    const e = await start();
    const file = join(tempDir(), 'w.csv');
    writeFileSync(file, 'Name,Who\nAda,ada@x\n');
    expect((await cli(e, ['import', file, '--map', 'Who=Status', '--match-on', 'Name'])).code).toBe(0);
    const fixed = await cli(e, ['import', file, '--map', 'Who=Owner', '--match-on', 'Name', '--json']);
    expect(fixed.code).toBe(0);
    expect(JSON.parse(fixed.stdout)).toMatchObject({ skipped: 0, updated: 1 });
    expect(e.state()[BOARD_ID]!.cards).toHaveLength(1);
    expect(e.state()[BOARD_ID]!.cards[0]).toMatchObject({ Name: 'Ada', Owner: 'ada@x' });
  });

  it('after kill -9: its stale lock is taken over; under another mapping the rows it sent are rejected as changed, not sent twice; --restart ignores it', async () => {
    const e = await start({ faults: 'delay:100ms' });
    const file = writeCards(ROWS, 'p');
    const planA = ['import', file, '--skip-column', 'Priority', '--concurrency', String(CONCURRENCY)];
    const run = spawnCli(e, planA);
    const dir = join(dirname(file), '.cardboard-journal');
    const log = () => (existsSync(dir) ? readdirSync(dir).find((n) => n.endsWith('.log')) : undefined);
    await until(() => log() !== undefined && journalRows(join(dir, log()!)) >= 4);
    run.child.kill('SIGKILL');
    await run.exit;
    expect(existsSync(boardLockPath(await serverIdentity(e.url), BOARD_ID))).toBe(true);
    const journalA = join(dir, log()!);
    const { finished, inFlight } = journalled(journalA);
    e.setFaults(undefined);

    // Plan B sends Priority too: every row plan A sent now has other content at its line.
    const results = join(tempDir(), 'results.csv');
    const planB = await cli(e, ['import', file, '--json', '--results', results]);
    expect(planB.code, planB.stderr).toBe(3);
    expect(planB.stderr).toContain(`journal ${journalA}`);
    expect(planB.stderr).toContain('another mapping or options: rows are matched to it by content');
    expect(JSON.parse(planB.stdout)).toMatchObject({ rows: ROWS, skipped: 0, rejected: finished + inFlight, created: ROWS - finished - inFlight });
    const rejected = readResults(results).filter((r) => r.state === 'rejected');
    expect(rejected.filter((r) => /^changed after it was sent \(line \d+\): use --match-on or an _id column to update its card, or --again to send it as a new card$/.test(r.message))).toHaveLength(finished);
    // Rows in flight at the kill, now changed: refused with the doubt named, never sent twice.
    expect(rejected.filter((r) => r.message.includes('may or may not have been applied (check the board)'))).toHaveLength(inFlight);
    const counts = nameCounts(e);
    expect(counts.size).toBeGreaterThanOrEqual(ROWS - inFlight);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    expect(existsSync(journalA)).toBe(true);

    const restarted = await cli(e, [...planA, '--restart', '--json']);
    expect(restarted.code).toBe(0);
    expect(restarted.stderr).not.toContain('Resuming');
    expect(JSON.parse(restarted.stdout)).toMatchObject({ rows: ROWS, skipped: 0, created: ROWS });
    // The journal stays: the memory of what was imported (--restart appended a line that forgets the rest).
    expect(readdirSync(dir)).toEqual([log()]);
  });
});
