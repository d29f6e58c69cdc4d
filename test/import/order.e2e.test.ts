// The board gets the file's order by default: each row's card is answered before the next row's POST
// leaves, across retries (a 500 that may have been applied, a 429), across a board re-check and across
// a resumed run. Checked by the board's own order (its pages, as `card list` reads them), over real HTTP.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli } from '../commands/helpers.js';
import { tempDir } from '../helpers/cli.js';
import type { RunningEmulator } from '../helpers/emulator.js';
import { run as altRun, seen, start as startAlt } from '../conformance/helpers.js';
import { lowJitter, nameCounts, posts, spawnCli, start, until, writeCards } from './helpers.js';

/** `<prefix>-1` … `<prefix>-n`: the names writeCards puts in the file, in its order. */
const names = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}-${i + 1}`);

/** The card names `card list --all --json` reads from the board, in the board's order. */
async function listed(e: RunningEmulator): Promise<string[]> {
  const r = await cli(e, ['card', 'list', '--all', '--json']);
  expect(r.code, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { Name: string }[]).map((c) => c.Name);
}

/** A CSV of `n` rows Title,Status for the alt server's board. */
function writeTitles(n: number, prefix: string): string {
  const file = join(tempDir(), `${prefix}.csv`);
  writeFileSync(file, `Title,Status\n${names(prefix, n).map((t) => `${t},Open`).join('\n')}\n`);
  return file;
}

describe('cardboard import keeps the file order by default', () => {
  it('30 rows with default flags: card list shows them in file order', async () => {
    const e = await start({ pageSize: 7 });
    const file = writeCards(30, 'o');
    const r = await cli(e, ['import', file, '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ rows: 30, created: 30 });
    expect(await listed(e)).toEqual(names('o', 30));
  });

  it('under resets and 500s (before and after the card is stored): every row once, in file order', async () => {
    const e = await start({ faults: 'reset:0.1,500-after:0.1,reset-after:0.1', faultSeed: 5, pageSize: 7 });
    const file = writeCards(30, 'f');
    const r = await cli(e, ['import', file, '--json'], { ...lowJitter, timeoutMs: 60_000 });
    expect(r.code, r.stderr).toBe(0);
    // Each kind of fault met at least once: tries that may have been applied were settled by reading the board.
    for (const status of [0, 500]) expect(e.requests().some((q) => q.method === 'POST' && q.status === status)).toBe(true);
    expect(JSON.parse(r.stdout).settled).toBeGreaterThan(0);
    e.setFaults(undefined);
    expect(await listed(e)).toEqual(names('f', 30));
  });

  it('a resumed run waits for the killed run\'s request in flight before sending later rows', async () => {
    // Each POST is answered 3 s late: the run killed while one is in flight leaves it landing after the kill
    // (3 s: more than a busy machine may take between seeing the POST and killing the run).
    const e = await start({ faults: 'delay:3s' });
    const file = writeCards(6, 'k');
    const journal = join(tempDir(), 'k.journal');
    // --timeout 9s: the resume waits that long (the killed run's timeout) for its request in flight, well
    // past the 3 s it takes to land.
    const args = ['--timeout', '9s', 'import', file, '--journal', journal];
    const first = spawnCli(e, args);
    // Row 3's POST has arrived (sent once row 2 was answered): it is stored 3 s later, after the kill.
    await until(() => posts(e) >= 3 || first.child.exitCode !== null);
    first.child.kill('SIGKILL');
    await first.exit;
    e.setFaults(undefined);
    const second = await cli(e, [...args, '--json']);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toMatch(/^Waiting \d+s for requests of the interrupted run .*; rows after them wait, to keep the file's order\.$/m);
    expect(JSON.parse(second.stdout)).toMatchObject({ rows: 6, skipped: 2, found: 1, created: 3 });
    expect([...nameCounts(e).values()].every((n) => n === 1)).toBe(true);
    expect(await listed(e)).toEqual(names('k', 6));
  });
});

describe('cardboard import keeps the file order against the alt server', () => {
  it('30 rows with default flags, in file order', async () => {
    const server = await startAlt({ pageSize: 4 });
    const file = writeTitles(30, 'a');
    const r = await altRun(server, ['import', file, '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(server.cards.map((c) => c.Title)).toEqual(names('a', 30));
  });

  it.each([
    ['a 500 (not stored; the board is read, then the row sent again)', { status: 500, body: 'internal error' }],
    ['a 429 with Retry-After: 1', { status: 429, headers: { 'retry-after': '1' } }],
  ])('a middle row answered %s first: still in file order', async (_name, fault) => {
    const server = await startAlt({ pageSize: 4 });
    const file = writeTitles(30, 'm');
    server.faults.push({ method: 'POST', bodyHas: '"m-15"', ...fault });
    const r = await altRun(server, ['import', file, '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(server.faults).toEqual([]);
    expect(seen(server, 'POST').map((q) => q.status)).toContain(fault.status);
    expect(seen(server, 'POST')).toHaveLength(31);
    expect(JSON.parse(r.stdout)).toMatchObject({ rows: 30, created: 30 });
    expect(server.cards.map((c) => c.Title)).toEqual(names('m', 30));
  });
});
