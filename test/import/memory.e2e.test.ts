// Exactly once across runs, processes and modes, attacked over real HTTP with the built binary: a finished
// import run again, a board emptied under the same id, two imports from two environments at once, `_id`
// rows on an Always Create New board under 500s, one stdin journal fed a, b, a, a server that applies
// requests late after kill -9, and the counts of a run that settles an earlier run's rows.
import { chmodSync, copyFileSync, existsSync, lstatSync, readFileSync, readlinkSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { cli } from '../commands/helpers.js';
import { tempDir } from '../helpers/cli.js';
import { BOARD_ID, CREATE_NEW_BOARD_ID } from '../helpers/emulator.js';
import { lowJitter, nameCounts, posts, readResults, spawnCli, start, until, writeCards } from './helpers.js';

const DEMO = fileURLToPath(new URL('../../fixtures/demo-cards.csv', import.meta.url));
const cards = (e: { state(): Record<string, { cards: unknown[] }> }, board = BOARD_ID) => e.state()[board]!.cards.length;
const journalLines = (path: string) => (existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter((l) => /\t[0-9a-f]{16}$/.test(l)).length : 0);

describe('import: memory across runs', () => {
  it("the README's import twice leaves 25 cards and the second run sends no POST; --again makes 50", async () => {
    const e = await start();
    const file = join(tempDir(), 'demo-cards.csv');
    copyFileSync(DEMO, file);
    const args = ['import', file, '--map', 'Assignee=Owner'];
    expect((await cli(e, args)).code).toBe(0);
    expect(cards(e)).toBe(25);
    const before = posts(e);
    const again = await cli(e, [...args, '--json']);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ rows: 25, created: 0, skipped: 25, found: 0 });
    expect(again.stderr).toMatch(/25 rows were imported into b-test on \d{4}-\d\d-\d\d \d\d:\d\d UTC; nothing to send \(--again sends them as new cards\)\./);
    expect(again.stderr).not.toContain('Resuming');
    expect(posts(e)).toBe(before);
    expect(cards(e)).toBe(25);

    const forced = await cli(e, [...args, '--again', '--json']);
    expect(forced.code, forced.stderr).toBe(0);
    expect(JSON.parse(forced.stdout)).toMatchObject({ rows: 25, created: 25, skipped: 0 });
    expect(cards(e)).toBe(50);
    // The --again run is remembered in its turn.
    expect(JSON.parse((await cli(e, [...args, '--json'])).stdout)).toMatchObject({ created: 0, skipped: 25 });
    expect(cards(e)).toBe(50);
  });

  it('an edited file sends only its new rows; two identical rows make two cards, and a re-run none', async () => {
    const e = await start();
    const file = join(tempDir(), 'twins.csv');
    writeFileSync(file, 'Name,Status\nA,Open\nA,Open\nB,Open\n');
    expect((await cli(e, ['import', file])).code).toBe(0);
    expect(cards(e)).toBe(3);
    writeFileSync(file, 'Name,Status\nA,Open\nA,Open\nB,Open\nC,Open\nA,Open\n');
    const edited = await cli(e, ['import', file, '--json']);
    expect(edited.code, edited.stderr).toBe(0);
    expect(JSON.parse(edited.stdout)).toMatchObject({ rows: 5, created: 2, skipped: 3 });
    expect(edited.stderr).toContain('3 rows were imported into b-test on ');
    expect(edited.stderr).toContain('and were not sent again');
    expect(nameCounts(e)).toEqual(new Map([['A', 3], ['B', 1], ['C', 1]]));
  });

  it('a board emptied under the same id (a restarted emulator) makes the memory stale: the run says so and sends', async () => {
    const first = await start();
    const file = writeCards(6, 'st');
    const args = ['import', file];
    expect((await cli(first, args)).code).toBe(0);
    const port = first.port;
    await first.close();
    const second = await start({ port });
    const r = await cli(second, [...args, '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/The 6 rows imported into board b-test on .* are no longer on it \(3 cards read back, none found\): the board was emptied or replaced/);
    expect(JSON.parse(r.stdout)).toMatchObject({ rows: 6, created: 6, skipped: 0 });
    expect(cards(second)).toBe(6);
    // Remembered again: the next run sends nothing.
    expect(JSON.parse((await cli(second, [...args, '--json'])).stdout)).toMatchObject({ created: 0, skipped: 6 });
    expect(cards(second)).toBe(6);
  });
});

describe('import: one import per board, whatever the environment', () => {
  it('two imports of one file at once, under another TMPDIR and another spelling of the host: one runs, the other is refused; 200 cards', async () => {
    const e = await start({ faults: 'delay:5ms' });
    const file = writeCards(200, 'env');
    const localhost = e.url.replace('127.0.0.1', 'localhost');
    const journal = join(tempDir(), 'env.journal');
    const winner = spawnCli(e, ['--base-url', localhost, 'import', file, '--journal', journal, '--concurrency', '4']);
    await until(() => posts(e) > 0);
    winner.child.kill('SIGSTOP');
    try {
      // Spawned: each variable moves what a process of its own would read (os.tmpdir(), $HOME, XDG). The
      // winner is stopped, so the six are started at once: each is refused whatever the others do.
      const vars = ['TMPDIR', 'TMP', 'TEMP', 'XDG_CACHE_HOME', 'XDG_CONFIG_HOME', 'HOME'];
      const losers = await Promise.all(vars.map((env) => cli(e, ['import', file, '--journal', join(tempDir(), `${env}.journal`)], { spawn: true, env: { [env]: tempDir() } })));
      losers.forEach((loser, i) => {
        expect(loser.code, `${vars[i]}: ${loser.stderr}`).toBe(1);
        expect(loser.stderr).toContain(`Another import into this board is running: process ${winner.child.pid} on `);
      });
    } finally {
      winner.child.kill('SIGCONT');
    }
    expect(await winner.exit).toBe(0);
    expect(cards(e)).toBe(200);
    expect(posts(e)).toBe(200);
    // The winner's journal, through the other spelling of the host: the same board, nothing to send.
    const spelled = await cli(e, ['import', file, '--journal', journal, '--json']);
    expect(spelled.code, spelled.stderr).toBe(0);
    expect(JSON.parse(spelled.stdout)).toMatchObject({ created: 0, skipped: 200 });
    expect(cards(e)).toBe(200);
  });
});

describe('import: the Update Mode settles a try', () => {
  it('_id rows on an Always Create New board under 500s make no extra card in three runs', async () => {
    const e = await start({ faultSeed: 3 });
    const seed = writeCards(10, 'acn');
    expect((await cli(e, ['import', seed], { board: CREATE_NEW_BOARD_ID })).code).toBe(0);
    const ids = (e.state()[CREATE_NEW_BOARD_ID]!.cards as unknown as { _id: string; Name: string }[]).map((c) => [c._id, c.Name] as const);
    expect(ids).toHaveLength(10);
    const file = join(tempDir(), 'updates.csv');
    writeFileSync(file, `_id,Name,Status\n${ids.map(([id, name]) => `${id},${name},Done`).join('\n')}\n`);
    e.setFaults('500-after:0.5');
    const args = ['import', file, '--journal', join(tempDir(), 'u.journal'), '--results', join(tempDir(), 'r.csv')];
    let made = 0;
    for (let run = 1; run <= 3; run++) {
      const before = cards(e, CREATE_NEW_BOARD_ID);
      const r = await cli(e, args, { ...lowJitter, board: CREATE_NEW_BOARD_ID });
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toContain("its Update Mode is 'Always Create New'");
      const gained = cards(e, CREATE_NEW_BOARD_ID) - before;
      // The row that showed the mode made its one card (spec 4.3 rule 3); nothing was repeated.
      expect(gained, `run ${run}`).toBe(1);
      made += gained;
    }
    const done = (e.state()[CREATE_NEW_BOARD_ID]!.cards as unknown as { Name: string; Status: string }[]).filter((c) => c.Status === 'Done');
    expect(done).toHaveLength(made);
    expect(new Set(done.map((c) => c.Name)).size).toBe(made);
  });
});

describe('import: one stdin journal, other data', () => {
  it('a (killed), b (to the end), a again through one stdin journal make |a| + |b| cards', async () => {
    const e = await start({ faults: 'delay:30ms' });
    const a = writeCards(400, 'a');
    const b = writeCards(400, 'b');
    const journal = join(tempDir(), 'stdin.journal');
    // --timeout 2s: a later run waits that long for the killed run's requests in flight.
    const args = ['--timeout', '2s', 'import', '-', '--journal', journal, '--concurrency', '4'];
    const first = spawnCli(e, args, a);
    await until(() => journalLines(journal) >= 120);
    first.child.kill('SIGKILL');
    await first.exit;
    e.setFaults(undefined);
    const second = await cli(e, [...args, '--json'], { input: readFileSync(b) });
    expect(second.code, second.stderr).toBe(0);
    expect(JSON.parse(second.stdout)).toMatchObject({ rows: 400, created: 400, rejected: 0 });
    expect(existsSync(journal)).toBe(true);
    const third = await cli(e, [...args, '--json'], { input: readFileSync(a) });
    expect(third.code, third.stderr).toBe(0);
    expect(JSON.parse(third.stdout)).toMatchObject({ rows: 400, rejected: 0, uncertain: 0 });
    const counts = nameCounts(e);
    expect(counts.size).toBe(800);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
  });
});

describe('import: a server that applies requests late', () => {
  it('each POST applied 3 s after it arrives, kill -9 before the first answers, resume at once: one card per row', async () => {
    const e = await start({ faults: 'delay:3s' });
    const file = writeCards(50, 'late');
    const journal = join(tempDir(), 'late.journal');
    // --timeout 8s: longer than the server holds a request, by more than a busy machine may be late in landing
    // it, so the resume waits for the held ones to land.
    const args = ['--timeout', '8s', 'import', file, '--journal', journal, '--concurrency', '8'];
    const run = spawnCli(e, args);
    await until(() => posts(e) >= 8);
    run.child.kill('SIGKILL');
    await run.exit;
    e.setFaults(undefined);
    // The held requests land 3 s after they arrived, while this run waits for them.
    const again = await cli(e, [...args, '--json']);
    const counts = nameCounts(e);
    expect(counts.size).toBe(50);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toMatch(/^Waiting \d+s for requests of the interrupted run/m);
    // One line each, never a newline shown escaped as `\n`.
    expect(again.stderr).toMatch(/^\d+ rows may have been applied/m);
    expect(again.stderr).not.toContain('\\n');
    const summary = JSON.parse(again.stdout);
    expect(summary).toMatchObject({ rows: 50, rejected: 0, uncertain: 0 });
    expect(summary.found).toBe(8);
  });
});

describe("import: counts are the board's", () => {
  it('300 rows under faults, again with --restart cut off by Ctrl-C, then once more: created equals what the board gained', async () => {
    const e = await start({ faults: '500-after:0.1,reset-after:0.1', faultSeed: 5 });
    const file = writeCards(300, 'cnt');
    const journal = join(tempDir(), 'cnt.journal');
    const results = join(tempDir(), 'results.csv');
    // Requests are held below for 8 s, past the 2 s Ctrl-C grace by far more than a busy machine may be late in
    // taking the signal, and within the --timeout: the ones in flight at the Ctrl-C are cut off by the grace.
    const args = ['--timeout', '10s', 'import', file, '--journal', journal, '--concurrency', '8'];
    const first = await cli(e, [...args, '--json'], lowJitter);
    expect(first.code, first.stderr).toBe(0);
    expect(cards(e)).toBe(300);

    e.setFaults(undefined);
    e.resetRequests();
    const second = spawnCli(e, [...args, '--restart']);
    // From its first POST on, requests are held 8 s, longer than the 2 s Ctrl-C grace: the ones in flight
    // at the Ctrl-C are cut off, and the ones answered before it are finished rows the next run skips.
    await until(() => posts(e) >= 1);
    e.setFaults('delay:8s');
    await until(() => posts(e) >= 16);
    second.child.kill('SIGINT');
    expect(await second.ended).toEqual({ code: null, signal: 'SIGINT' });
    // The requests cut off in flight land on the server after the run ended (held, never dropped, and
    // applied under the faults below too: they fail only after storing the card): the board holds one card
    // per POST of that run once they have, before the next run's first card.
    const before = 300 + posts(e);
    e.setFaults('500-after:0.1,reset-after:0.1');
    const third = await cli(e, [...args, '--results', results, '--json'], lowJitter);
    expect(third.code, third.stderr).toBe(0);
    const summary = JSON.parse(third.stdout);
    expect(summary.created).toBe(cards(e) - before);
    expect(summary.found).toBeGreaterThan(0);
    expect(summary.created + summary.found + summary.skipped).toBe(300);
    const found = readResults(results).filter((r) => r.state === 'found');
    expect(found).toHaveLength(summary.found);
    expect(found.every((r) => r.message.includes("an earlier run's try stored it") && r._id !== '')).toBe(true);
    // Every row of the file has exactly one card from the --restart run on: two in all (the first run's too).
    expect([...nameCounts(e).values()].every((n) => n === 2)).toBe(true);
  });
});

describe('import: files that are not the journal', () => {
  it('--journal on a file that is not a journal is refused, --restart and --again included, through a symlink too: content and mode kept', async () => {
    const e = await start();
    const file = writeCards(3, 'nj');
    const dir = tempDir();
    const notes = join(dir, 'notes.txt');
    writeFileSync(notes, 'my notes\n');
    chmodSync(notes, 0o644);
    const link = join(dir, 'link.journal');
    symlinkSync(notes, link);
    for (const path of [notes, link]) {
      for (const extra of [[], ['--restart'], ['--again']]) {
        const r = await cli(e, ['import', file, '--journal', path, ...extra]);
        expect(readFileSync(notes, 'utf8')).toBe('my notes\n');
        expect(statSync(notes).mode & 0o777).toBe(0o644);
        expect(lstatSync(link).isSymbolicLink()).toBe(true);
        expect(readlinkSync(link)).toBe(notes);
        expect(posts(e)).toBe(0);
        expect(r.code, r.stderr).toBe(2);
        expect(r.stderr).toContain(`--journal ${path} is not an import journal; it is neither read nor changed. Nothing was sent.`);
      }
    }
  });
});
