import { symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { cli } from '../commands/helpers.js';
import { runMain, tempDir } from '../helpers/cli.js';
import { BOARD_ID } from '../helpers/emulator.js';
import { nameCounts, spawnCli, start, until, writeCards } from './helpers.js';

describe('cardboard import: one run per board, outputs that cannot hurt', () => {
  it('one import per board: the same file, a symlink to it, another --journal and stdin are refused while one runs (exit 1, pid and input named)', async () => {
    const e = await start({ faults: 'delay:20ms' });
    const file = writeCards(40, 'cc');
    const link = join(tempDir(), 'link.csv');
    symlinkSync(file, link);
    // Not a race left to the scheduler (on a loaded machine the first run could end before the others
    // start): the first run is stopped (SIGSTOP) once its first card is sent, so it holds the lock while
    // the others start, and continued once they have exited.
    const winner = spawnCli(e, ['import', file, '--concurrency', '4']);
    await until(() => e.requests().some((q) => q.method === 'POST'), "the first run's first POST");
    winner.child.kill('SIGSTOP');
    try {
      const attempts: string[][] = [
        ['import', file, '--concurrency', '4'],
        ['import', link],
        ['import', file, '--journal', join(tempDir(), 'alt.journal')],
        ['import', '-', '--journal', join(tempDir(), 'stdin.journal')],
      ];
      for (const args of attempts) {
        const loser = spawnCli(e, args, args[1] === '-' ? file : undefined);
        expect(await loser.exit, args.join(' ')).toBe(1);
        const err = loser.output().stderr;
        expect(err).toContain(`Another import into this board is running: process ${winner.child.pid} on `);
        expect(err).toContain(`importing ${file}`);
        expect(err).toMatch(/Lock: .*\.cache\/cardboard\/locks\/import-[0-9a-f]{32}\.lock/);
      }
    } finally {
      winner.child.kill('SIGCONT');
    }
    expect(await winner.exit).toBe(0);
    const counts = nameCounts(e);
    expect(counts.size).toBe(40);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    // The refused runs sent nothing: every POST is the winner's.
    expect(e.requests().filter((q) => q.method === 'POST')).toHaveLength(40);
  });

  it('a dry run takes no lock: it runs while an import into the board holds it', async () => {
    const e = await start({ faults: 'delay:20ms' });
    const file = writeCards(20, 'dl');
    const winner = spawnCli(e, ['import', file, '--concurrency', '2']);
    await until(() => e.requests().some((q) => q.method === 'POST'), "the import's first POST");
    winner.child.kill('SIGSTOP');
    try {
      const dry = await cli(e, ['import', file, '--dry-run', '--json']);
      expect(dry.code, dry.stderr).toBe(0);
      expect(JSON.parse(dry.stdout)).toMatchObject({ dryRun: true, rows: 20 });
    } finally {
      winner.child.kill('SIGCONT');
    }
    expect(await winner.exit).toBe(0);
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

  it('after uncertain rows (the board could not be read), the hint says to run the same command, and asks for a key for the rejects file', async () => {
    // A server that stores each POST and then answers 500, and cannot list its cards: the rows' tries may
    // have been applied and the board cannot be read to settle them.
    const stored: string[] = [];
    const server = createServer((req, res) => {
      if (req.method === 'GET' && req.url === '/api/aptlet/ub/schema') {
        res.writeHead(200, { 'content-type': 'application/json' }).end('[{"name":"Name"},{"name":"Status"},{"name":"Owner"},{"name":"Priority"}]');
        return;
      }
      let body = '';
      req.on('data', (c: Buffer) => (body += c));
      req.on('end', () => {
        if (req.method === 'POST') {
          stored.push(body);
          res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"Internal"}');
        } else res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"Not found"}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const file = writeCards(10, 'un');
    const rejects = join(tempDir(), 'fix.csv');
    const r = await runMain(['import', file, '--rejects', rejects, '--give-up-after', '1s'], {
      env: { CARDBOARD_BASE_URL: url, CARDBOARD_BOARD: 'ub', CARDBOARD_TOKEN: 'tok-uncertain-1234' },
    });
    expect(r.code).toBe(3);
    // Each row sent once: never again without reading the board first.
    expect(stored).toHaveLength(10);
    expect(r.stderr).toContain(`Run the same command again to settle the 10 uncertain rows: it reads the board for them and sends only those it does not find: cardboard import ${file} --give-up-after 1s --rejects ${rejects}`);
    expect(r.stderr).toContain('uncertain rows may already be on the board: do not import them again as they are.');
    expect(r.stderr).toContain('--match-on <field> (a field whose value is unique per card; fields sent: Name, Status, Owner, Priority) or with an _id column');
    expect(r.stderr).toContain(`cardboard import ${rejects} --match-on '<Field>' --give-up-after 1s --rejects ${rejects.replace(/\.csv$/, '.2.csv')}`);
  });
});
