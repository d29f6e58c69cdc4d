import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'csv-parse/sync';
import { beforeEach, describe, expect, it } from 'vitest';
import { cli } from '../commands/helpers.js';
import { tempDir } from '../helpers/cli.js';
import { BOARD_ID, CREATE_NEW_BOARD_ID } from '../helpers/emulator.js';
import { nameCounts, posts, readResults, start, writeCards } from './helpers.js';

const DEMO_SOURCE = fileURLToPath(new URL('../../fixtures/demo-cards.csv', import.meta.url));
let DEMO = '';

beforeEach(() => {
  // A fresh copy per test: the default journal lives next to the input and is keyed by content and board.
  DEMO = join(tempDir(), 'demo-cards.csv');
  copyFileSync(DEMO_SOURCE, DEMO);
});

describe('cardboard import: mapping', () => {
  it('stops with exit 2, one line per unmapped header with the --map flag to add, and sends nothing', async () => {
    const e = await start();
    const file = join(tempDir(), 'x.csv');
    writeFileSync(file, 'Name,status,Assignee\nA,Open,Al\n');
    const r = await cli(e, ['import', file]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("column 'status': no field of that name; closest is 'Status': add --map status=Status\n");
    expect(r.stderr).toContain("column 'Assignee': no field is close: add --map 'Assignee=<Field>' or --skip-column Assignee");
    expect(r.stderr).toMatch(/hint: cardboard import .*x\.csv --map status=Status --skip-column Assignee/);
    expect(posts(e)).toBe(0);
    expect(e.state()[BOARD_ID]!.cards).toEqual([]);
  });

  it('refuses a --map to a field the board does not have, naming the close one', async () => {
    const e = await start();
    const r = await cli(e, ['import', DEMO, '--map', 'Assignee=owner']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("the board has no field 'owner' (did you mean 'Owner'?)");
    expect(posts(e)).toBe(0);
  });
});

describe('cardboard import: the demo CSV', () => {
  it('imports every row with the mapping, quoted commas and newlines intact, empty cells omitted', async () => {
    const e = await start();
    const dir = tempDir();
    const results = join(dir, 'results.csv');
    const r = await cli(e, ['import', DEMO, '--map', 'Assignee=Owner', '--results', results, '--json']);
    expect(r.stderr).not.toContain('error');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ dryRun: false, rows: 25, created: 25, updated: 0, found: 0, unchanged: 0, skipped: 0, rejected: 0, uncertain: 0, settled: 0, durationMs: expect.any(Number), rowsPerSec: expect.any(Number), results, rejects: null });
    const cards = e.state()[BOARD_ID]!.cards;
    expect(cards).toHaveLength(25);
    const expected = parse(readFileSync(DEMO), { columns: true }) as Record<string, string>[];
    const res = readResults(results).sort((a, b) => Number(a.line) - Number(b.line));
    expect(res.map((x) => x.line)).toEqual(['2', '3', '4', '5', '6', '7', '10', '11', '12', '13', '14', '15', '16', '17', '18', '19', '20', '21', '22', '23', '24', '25', '26', '28', '29']);
    // One row at a time by default: the board holds the cards in the file's order, line 2 first.
    expect(cards.map((c) => c._id)).toEqual(res.map((x) => x._id));
    // Each card against the row whose line the results file gives for its _id.
    const byId = new Map(cards.map((c) => [c._id, c]));
    expected.forEach((row, i) => {
      const want: Record<string, string> = { Name: row.Name!, Status: row.Status!, Priority: row.Priority! };
      if (row.Assignee) want.Owner = row.Assignee;
      expect(byId.get(res[i]!._id)).toEqual({ _id: res[i]!._id, ...want });
    });
  });

  it('--match-on re-run updates instead of duplicating: the card count does not change', async () => {
    const e = await start();
    const first = await cli(e, ['import', DEMO, '--map', 'Assignee=Owner', '--match-on', 'Name', '--json']);
    expect(JSON.parse(first.stdout)).toMatchObject({ created: 25, updated: 0 });
    // The example of docs/import.md and the README's tour: the same file again sends nothing.
    const again = await cli(e, ['import', DEMO, '--map', 'Assignee=Owner', '--match-on', 'Name', '--json']);
    expect(JSON.parse(again.stdout)).toMatchObject({ rows: 25, created: 0, updated: 0, unchanged: 25, skipped: 0 });
    const edited = join(tempDir(), 'edited.csv');
    writeFileSync(edited, readFileSync(DEMO, 'utf8').replace('Fix login redirect loop,Open', 'Fix login redirect loop,Done'));
    const second = await cli(e, ['import', edited, '--map', 'Assignee=Owner', '--match-on', 'Name', '--json']);
    expect(second.code).toBe(0);
    // Only the edited row is sent; line 11's empty Assignee is omitted and its card has no Owner: unchanged.
    expect(JSON.parse(second.stdout)).toMatchObject({ rows: 25, created: 0, updated: 1, unchanged: 24 });
    const cards = e.state()[BOARD_ID]!.cards;
    expect(cards).toHaveLength(25);
    expect(cards.find((c) => c.Name === 'Fix login redirect loop')?.Status).toBe('Done');
  });

  it('stops at the first _id post on an Always-Create-New board, with one duplicate at most', async () => {
    const e = await start();
    const args = ['import', DEMO, '--map', 'Assignee=Owner', '--match-on', 'Name'];
    const first = await cli(e, args, { board: CREATE_NEW_BOARD_ID });
    expect(first.code).toBe(0);
    // --force: every row is posted with its card's _id, though none changed.
    const second = await cli(e, [...args, '--force'], { board: CREATE_NEW_BOARD_ID });
    expect(second.code).toBe(1);
    expect(second.stderr).toContain("its Update Mode is 'Always Create New'");
    expect(second.stderr).toContain('Stopped before making more duplicates');
    expect(e.state()[CREATE_NEW_BOARD_ID]!.cards).toHaveLength(26);
  });

  it('--dry-run prints the mapping, the rows as they would be sent and the plan; only GETs', async () => {
    const e = await start();
    await cli(e, ['import', DEMO, '--map', 'Assignee=Owner']);
    e.resetRequests();
    const edited = join(tempDir(), 'edited.csv');
    writeFileSync(edited, readFileSync(DEMO, 'utf8').replace('Fix login redirect loop,Open', 'Fix login redirect loop,Done'));
    const r = await cli(e, ['import', edited, '--map', 'Assignee=Owner', '--match-on', 'Name', '--skip-column', 'Priority', '--dry-run']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Assignee -> Owner   [--map]');
    expect(r.stdout).toContain('Priority -> (dropped)   [--skip-column]');
    expect(r.stdout).toMatch(/line \d+: \{"Name":"Fix login redirect loop","Status":"Done","Owner":"[^"]+","_id":/);
    expect(r.stdout).toContain('Would send 1 of 25 rows; a run would end with:\n  created 0\n  updated 1 (by Name; 25 cards on the board)\n  unchanged 24 (equal to their card: not sent)\n  rejected 0');
    expect(r.stdout).toMatch(/line \d+: Status: Open → Done/);
    expect(e.requests().length).toBeGreaterThan(0);
    expect(e.requests().every((q) => q.method === 'GET')).toBe(true);
  });

  it('reads stdin with -', async () => {
    const e = await start();
    const r = await cli(e, ['import', '-', '--json'], { input: 'Name;Status\nFrom stdin;Open\n' });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('no journal is kept');
    expect(e.state()[BOARD_ID]!.cards.map((c) => [c.Name, c.Status])).toEqual([['From stdin', 'Open']]);
  });
});

describe('cardboard import: malformed lines', () => {
  it('says 1 row, not 1 rows: one rejected row in the summary and the error (exit 3)', async () => {
    const e = await start();
    const file = join(tempDir(), 'one-bad.csv');
    writeFileSync(file, 'Name,Status\nok-1,Open\ntoo,many,fields\n');
    const r = await cli(e, ['import', file]);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('error: 1 row rejected, 0 uncertain (the card may exist):\n  line 3: expected 2 fields, found 3\n');
    expect(r.stderr).toMatch(/✖ Importing: 2 \/ 2 rows · [\d.]+ rows\/s · 0 retries · 0 waits \(429\)/);
  });

  it.each(['\n', '\r\n'])('reports them with their starting line (eol %j) in results and rejects; exit 3', async (eol) => {
    const e = await start();
    const dir = tempDir();
    const file = join(dir, 'bad.csv');
    const lines = ['Name,Status', 'ok-1,Open', '"multi', 'line",Open', 'too,many,fields', 'ok-2,Open', 'short', 'ok-3,"never closed', 'tail,Open', ''];
    writeFileSync(file, lines.join(eol));
    const [results, rejects] = [join(dir, 'res.csv'), join(dir, 'rej.csv')];
    const r = await cli(e, ['import', file, '--results', results, '--rejects', rejects]);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain(
      '  line 5: expected 2 fields, found 3\n  line 7: expected 2 fields, found 1\n  line 8: unclosed quote: the record never ends: line 8 could not be read as a record: "ok-3,\\"never closed"\nhint: Fix the rows in',
    );
    const res = readResults(results)
      .map((x) => [x.line, x.state])
      .sort((a, b) => Number(a[0]) - Number(b[0]));
    expect(res).toEqual([
      ['2', 'created'],
      ['3', 'created'],
      ['5', 'rejected'],
      ['6', 'created'],
      ['7', 'rejected'],
      ['8', 'rejected'],
      ['9', 'created'],
    ]);
    const rej = parse(readFileSync(rejects), { columns: true }) as Record<string, string>[];
    expect(rej.map((x) => [x.Name, x._cardboard_reason])).toEqual([
      ['too', 'rejected: line 5: expected 2 fields, found 3 [extra fields: fields]'],
      ['short', 'rejected: line 7: expected 2 fields, found 1'],
      ['', 'rejected: line 8: unclosed quote: the record never ends: line 8 could not be read as a record: "ok-3,\\"never closed"'],
    ]);
    // Reading starts again after the unclosed quote: the last line is imported.
    expect([...nameCounts(e).keys()]).toEqual(['ok-1', `multi${eol}line`, 'ok-2', 'tail']);
  });
});

describe('cardboard import: rate limit', () => {
  it('waits out 429s (Retry-After from the real header) and imports every row once', async () => {
    // Pacing under a limit is simulated at length in engine.test.ts; this is the real-socket check. Five a
    // second with a burst of six: the rows come faster than that, so the seventh or so meets a 429, and after
    // the pause the pacer's rate (from the six accepted) lets the rest through in a second or two.
    const e = await start({ rateLimit: { perMinute: 300, burst: 6 } });
    const file = writeCards(12, 'rl');
    const r = await cli(e, ['import', file, '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ rows: 12, created: 12 });
    const counts = nameCounts(e);
    expect(counts.size).toBe(12);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    expect(e.requests().filter((q) => q.status === 429).length).toBeGreaterThan(0);
  });

  it('16 workers waiting on the rate gate at once: every row once, and no listener-leak warning from Node', async () => {
    // A burst of 12 for the 16 first requests: some meet a 429, the pacer pauses and slows, and all 16
    // workers then wait on the gate at once; the rate it learns from the 12 accepted ends the run in seconds.
    const e = await start({ rateLimit: { perMinute: 3000, burst: 12 } });
    const file = writeCards(32, 'sixteen');
    const r = await cli(e, ['import', file, '--concurrency', '16', '--json'], { spawn: true, timeoutMs: 100_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ rows: 32, created: 32 });
    expect(e.requests().filter((q) => q.status === 429).length).toBeGreaterThan(0);
    expect(r.stderr).not.toMatch(/MaxListenersExceededWarning|Warning:/);
  });
});

describe('cardboard import: one vocabulary for row states', () => {
  it('dry run and run report the same state names; a dropped column is null in JSON and the map file reads it back', async () => {
    const e = await start();
    const file = writeCards(3, 'v');
    const dry = await cli(e, ['import', file, '--skip-column', 'Status', '--dry-run', '--json']);
    expect(dry.code, dry.stderr).toBe(0);
    const plan = JSON.parse(dry.stdout) as Record<string, unknown>;
    expect(plan).toMatchObject({ dryRun: true, mapping: { Name: 'Name', Status: null, Owner: 'Owner', Priority: 'Priority' }, newFields: [], rows: 3, created: 3, updated: 0, unchanged: 0, rejected: 0 });
    expect(Object.keys(plan)).not.toContain('creates');
    const run = await cli(e, ['import', file, '--skip-column', 'Status', '--json']);
    expect(run.code, run.stderr).toBe(0);
    const done = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(done).toMatchObject({ dryRun: false, rows: 3, created: 3, updated: 0, unchanged: 0, skipped: 0, rejected: 0, uncertain: 0 });
    // The states the dry run names are states of the run, counted the same.
    for (const state of ['created', 'updated', 'unchanged', 'rejected']) expect(done[state]).toBe(plan[state]);

    // The dry run's mapping is a --map-file as it stands; one written by an older version ("(dropped)") still reads.
    const dir = tempDir();
    writeFileSync(join(dir, 'now.json'), JSON.stringify(plan.mapping));
    writeFileSync(join(dir, 'old.json'), JSON.stringify({ Name: 'Name', Status: '(dropped)', Owner: 'Owner', Priority: 'Priority' }));
    for (const map of ['now.json', 'old.json']) {
      const again = await cli(e, ['import', file, '--map-file', join(dir, map), '--dry-run']);
      expect(again.code, again.stderr).toBe(0);
      expect(again.stdout).toContain('Status -> (dropped)   [map file]');
    }
  });
});
