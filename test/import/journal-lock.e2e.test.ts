import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli } from '../commands/helpers.js';
import { tempDir } from '../helpers/cli.js';
import { BOARD_ID } from '../helpers/emulator.js';
import { nameCounts, spawnCli, start, writeCards } from './helpers.js';

describe('cardboard import: one run per input and board, outputs that cannot hurt', () => {
  it('two concurrent runs of the same file: one refuses (exit 1, pid and lock named), no duplicate card', async () => {
    const e = await start({ faults: 'delay:20ms' });
    const file = writeCards(40, 'cc');
    const args = ['import', file, '--match-on', 'Name', '--concurrency', '4'];
    // Not a race left to the scheduler (on a loaded machine the first run could end before the second
    // starts): the first run is stopped (SIGSTOP) once its first card is sent, so it holds the lock
    // while the second starts, and continued once the second has exited.
    const winner = spawnCli(e, args);
    while (!e.requests().some((q) => q.method === 'POST')) await new Promise((r) => setTimeout(r, 5));
    winner.child.kill('SIGSTOP');
    const loser = spawnCli(e, args);
    const loserCode = await loser.exit;
    winner.child.kill('SIGCONT');
    expect([await winner.exit, loserCode]).toEqual([0, 1]);
    expect(loser.output().stderr).toMatch(new RegExp(`running: process ${winner.child.pid} on .*Lock: .*\\.cardboard-journal/cc\\.csv\\.[0-9a-f]{16}\\.${BOARD_ID}\\.[0-9a-f]{8}\\.lock`));
    const counts = nameCounts(e);
    expect(counts.size).toBe(40);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
  });

  it('--results, --rejects or --journal that are the input (or a link to it) are refused before any request', async () => {
    const e = await start();
    const file = writeCards(3, 'g');
    for (const flag of ['--results', '--rejects', '--journal']) {
      const r = await cli(e, ['import', file, flag, join(file, '..', 'g.csv')]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('is the input');
    }
    const out = tempDir();
    const r = await cli(e, ['import', file, '--results', join(out, 'o.csv'), '--rejects', join(out, 'x', '..', 'o.csv')]);
    expect(r.code).toBe(2);
    expect(e.requests()).toHaveLength(0);
  });

  it("the unmapped-column hint repeats the user's own options", async () => {
    const e = await start();
    const file = join(tempDir(), 'u.csv');
    writeFileSync(file, 'Name,status\nA,Open\n');
    const r = await cli(e, ['--rate', '2/s', 'import', file, '--dry-run', '--results', 'r.csv', '--map', 'Name=Name'], { board: BOARD_ID });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`hint: cardboard --rate 2/s import ${file} --map Name=Name --results r.csv --dry-run --map status=Status`);
  });

  it('after uncertain rows without a key, the hint asks for --match-on or an _id column, with the rejects file and new outputs', async () => {
    // Reads are retried; each POST stored then answered 500 leaves its row uncertain.
    const e = await start({ faults: '500-after:0.5', faultSeed: 3 });
    const file = writeCards(10, 'un');
    const rejects = join(tempDir(), 'fix.csv');
    const r = await cli(e, ['import', file, '--rejects', rejects, '--give-up-after', '1s']);
    console.log(r.stderr);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('uncertain rows may already be on the board: do not import them again as they are.');
    expect(r.stderr).toContain('--match-on <field> (a field whose value is unique per card; fields sent: Name, Status, Owner, Priority) or with an _id column');
    expect(r.stderr).toContain(`cardboard import ${rejects} --match-on '<Field>' --give-up-after 1s --rejects ${rejects.replace(/\.csv$/, '.2.csv')}`);
  });
});
