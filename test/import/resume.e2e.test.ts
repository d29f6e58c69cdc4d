import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli } from '../commands/helpers.js';
import { tempDir } from '../helpers/cli.js';
import { BOARD_ID } from '../helpers/emulator.js';
import { nameCounts, posts, readResults, spawnCli, start, until, writeCards } from './helpers.js';

const ROWS = 60;
const CONCURRENCY = 4;

/** Finished rows recorded in a journal file (its first line is the header). */
function journalRows(path: string): number {
  if (!existsSync(path)) return 0;
  return readFileSync(path, 'utf8')
    .split('\n')
    .slice(1)
    .filter((l) => /^\d+\t\w+\t/.test(l)).length;
}

describe('cardboard import: resume', () => {
  it('after kill -9, a re-run skips the journalled rows; at most the rows in flight are sent twice', async () => {
    const e = await start({ faults: 'delay:100ms' });
    const file = writeCards(ROWS, 'k');
    const journal = join(tempDir(), 'import.journal');
    const args = ['import', file, '--journal', journal, '--concurrency', String(CONCURRENCY)];
    const run = spawnCli(e, args);
    await until(() => journalRows(journal) >= 12);
    run.child.kill('SIGKILL');
    await run.exit;
    const journalled = journalRows(journal);
    const before = e.state()[BOARD_ID]!.cards.length;
    expect(before).toBeLessThan(ROWS);

    e.setFaults(undefined);
    const results = join(tempDir(), 'results.csv');
    const again = await cli(e, [...args, '--results', results, '--json']);
    expect(again.code).toBe(0);
    const summary = JSON.parse(again.stdout);
    expect(summary.rows).toBe(ROWS);
    expect(summary.skipped).toBe(journalled);
    expect(readResults(results).filter((r) => r.state === 'skipped')).toHaveLength(journalled);
    const counts = nameCounts(e);
    expect(counts.size).toBe(ROWS);
    const twice = [...counts.values()].filter((n) => n > 1);
    expect(twice.every((n) => n === 2)).toBe(true);
    // Sent before the kill but not journalled: one row per worker at most (issue 4, section 6).
    expect(twice.length).toBeLessThanOrEqual(CONCURRENCY);
    expect(e.state()[BOARD_ID]!.cards.length).toBe(ROWS + twice.length);
  });

  it('Ctrl-C before the first row (reading the schema) stops at once with 130: it is never swallowed', async () => {
    const e = await start({ faults: 'delay:30s' });
    const run = spawnCli(e, ['import', writeCards(5, 'early'), '--match-on', 'Name']);
    await until(() => e.requests().length > 0); // the schema GET is held by the delay
    run.child.kill('SIGINT');
    expect(await run.exit).toBe(130);
    expect(run.output().stderr).toContain('error: Interrupted.');
    expect(posts(e)).toBe(0);
  });

  it('Ctrl-C lets requests in flight finish, journals them and exits 130; the re-run completes with no duplicate', async () => {
    const e = await start({ faults: 'delay:100ms' });
    const file = writeCards(ROWS, 'c');
    const args = ['import', file, '--concurrency', String(CONCURRENCY)];
    const run = spawnCli(e, args);
    const journalDir = join(dirname(file), '.cardboard-journal');
    const log = () => readdirSync(journalDir).find((n) => n.endsWith('.log'));
    const journal = () => (existsSync(journalDir) ? join(journalDir, log() ?? 'none') : '');
    await until(() => journalRows(journal()) >= 8);
    run.child.kill('SIGINT');
    expect(await run.exit).toBe(130);
    const out = run.output();
    expect(out.stderr).toContain('Interrupted: finishing the requests in flight');
    expect(out.stderr).toMatch(/error: Interrupted after \d+ rows\./);
    expect(out.stderr).toContain('hint: Run the same command again to resume');
    expect(journal()).toMatch(new RegExp(`c\\.csv\\.[0-9a-f]{16}\\.${BOARD_ID}\\.[0-9a-f]{8}\\.[0-9a-f]{12}\\.log$`));
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

  it('a finished run closes its journal: the same command again starts afresh (README example)', async () => {
    const e = await start();
    const file = writeCards(5, 'r');
    const args = ['import', file, '--map', 'Owner=Owner', '--match-on', 'Name', '--json'];
    expect((await cli(e, args)).code).toBe(0);
    expect(readdirSync(join(dirname(file), '.cardboard-journal'))).toEqual([]);
    const again = JSON.parse((await cli(e, args)).stdout);
    expect(again).toMatchObject({ rows: 5, skipped: 0, created: 0 });
    // `unchanged` when only changes are sent (issue 10, point 2); `updated` without it.
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

  it('after kill -9: its stale lock is taken over; another plan names its journal and does not apply it; --restart ignores it', async () => {
    const e = await start({ faults: 'delay:100ms' });
    const file = writeCards(ROWS, 'p');
    const planA = ['import', file, '--skip-column', 'Priority', '--concurrency', String(CONCURRENCY)];
    const run = spawnCli(e, planA);
    const dir = join(dirname(file), '.cardboard-journal');
    const log = () => (existsSync(dir) ? readdirSync(dir).find((n) => n.endsWith('.log')) : undefined);
    await until(() => log() !== undefined && journalRows(join(dir, log()!)) >= 4);
    run.child.kill('SIGKILL');
    await run.exit;
    expect(readdirSync(dir).some((n) => n.endsWith('.lock'))).toBe(true);
    const journalA = join(dir, log()!);
    e.setFaults(undefined);

    const planB = await cli(e, ['import', file, '--json']);
    expect(planB.code).toBe(0);
    expect(planB.stderr).toContain(`not applied: ${journalA}`);
    expect(JSON.parse(planB.stdout)).toMatchObject({ rows: ROWS, skipped: 0 });
    expect(existsSync(journalA)).toBe(true);

    const restarted = await cli(e, [...planA, '--restart', '--json']);
    expect(restarted.code).toBe(0);
    expect(restarted.stderr).not.toContain('not applied');
    expect(JSON.parse(restarted.stdout)).toMatchObject({ rows: ROWS, skipped: 0, created: ROWS });
    expect(readdirSync(dir)).toEqual([]);
  });
});
