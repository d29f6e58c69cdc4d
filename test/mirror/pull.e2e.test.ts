// `cardboard mirror pull` and `mirror status` over real HTTP against the emulator (spawned CLI): the mirror,
// read with python3's sqlite3, equals the server's board card for card and value for value after a second
// pull, whatever happened during the first (faults, cards created and changed between its pages); a pull
// killed with -9 resumes; two pulls of one mirror never run at once; --every prints what changed.
import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runCli, tempDir } from '../helpers/cli.js';
import { BOARD_ID, pageRequests } from '../helpers/emulator.js';
import { start, until } from '../import/helpers.js';
import { absent, ENGINES } from '../helpers/engines.js';
import { emuEnv, postCard, serverCards, spawnWith } from './pull-helpers.js';

describe.each(ENGINES)('mirror pull against the emulator (spawned CLI, real HTTP) ($name)', (engine) => {
  if (absent(engine)) return;

  it('under 500s and resets, with cards created and changed during the walk: a second pull leaves the mirror equal to the board', async () => {
    const emu = await start({ seedCards: 60, pageSize: 5, faults: '500-after:0.15,reset:0.15,delay:150ms' });
    const file = await engine.mirror();
    const env = emuEnv(emu, file);
    const first = runCli(['mirror', 'pull'], { env });
    // Between the pages of the walk: a card on a page already read changes, one on a page not read yet
    // changes, and a card is created (it lands at the end of the list, on a page not read yet).
    // Page 2 asked for: pages 0 and 1 were read and saved; the last page (11) is far ahead.
    await until(() => emu.requests().some((q) => q.path.endsWith('?page=2')), 'the pull to ask for page 2');
    const cards = emu.state()[BOARD_ID]!.cards;
    const early = cards[0]!._id;
    const late = cards[59]!._id;
    await postCard(emu, { _id: late, Status: 'Changed late' });
    await postCard(emu, { _id: early, Status: 'Changed early' });
    await postCard(emu, { Name: 'Created during the walk', Status: 'Open' });
    const r = await first;
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/Pulled \d+ pages, \d+ cards: \d+ new, \d+ changed, 0 deleted; 0 verified by GET, 0 kept unconfirmed; \d+ requests in /);
    const after = (await engine.cards(file));
    // The page holding `early` was read before it changed: the mirror has its older value until the next pull.
    expect(after[early]!.Status).not.toBe('Changed early');
    expect(after[late]!.Status).toBe('Changed late');
    emu.setFaults('500-after:0.15,reset:0.15');
    const second = await runCli(['mirror', 'pull', '--json'], { env });
    expect(second.code, second.stderr).toBe(0);
    const summary = JSON.parse(second.stdout) as Record<string, unknown>;
    expect(summary).toMatchObject({ location: file, pull: 2, new: 0, changed: 1, deleted: 0, total: Object.keys(serverCards(emu)).length });
    expect((await engine.cards(file))).toEqual(serverCards(emu));
  });

  it('kill -9 mid-pull: the next pull says it resumes, reads only the pages left, and ends equal to the board', async () => {
    const emu = await start({ seedCards: 200, pageSize: 5, faults: 'delay:60ms' });
    const file = await engine.mirror();
    const env = emuEnv(emu, file);
    const cwd = tempDir();
    const run = spawnWith(['mirror', 'pull'], env, tempDir(), cwd);
    await until(() => pageRequests(emu).length >= 15, 'the pull to read 15 pages');
    run.child.kill('SIGKILL');
    expect((await run.ended).signal).toBe('SIGKILL');
    // The killed pull's lock is free at once for the next pull (PostgreSQL: the server ends the session), and
    // the pull left nothing in the directory it ran in.
    expect(readdirSync(cwd)).toEqual([]);
    const before = pageRequests(emu).length;
    emu.setFaults(undefined);
    emu.resetRequests();
    const next = await runCli(['mirror', 'pull', '--json'], { env });
    expect(next.code, next.stderr).toBe(0);
    expect(next.stderr).toMatch(/Resuming pull #1 begun \S+ at page (\d+) \(\d+ pages, \d+ cards saved before it stopped\)\./);
    const resumedAt = Number(/at page (\d+)/.exec(next.stderr)![1]);
    expect(resumedAt).toBeGreaterThanOrEqual(before - 2);
    // 40 pages and the empty one in all: this run reads only those from where the first stopped.
    expect(pageRequests(emu).length).toBe(41 - resumedAt);
    expect(JSON.parse(next.stdout)).toMatchObject({ pull: 1, resumedAt: { page: resumedAt, startedAt: expect.any(String) }, pages: 40 - resumedAt });
    expect((await engine.cards(file))).toEqual(serverCards(emu));
  });

  it('a second pull of the same mirror while one runs, from another directory and configuration, is refused (exit 1), naming the one that holds it', async () => {
    const emu = await start({ seedCards: 60, pageSize: 5, faults: 'delay:150ms' });
    const file = await engine.mirror();
    const env = emuEnv(emu, file);
    // Each in a directory of its own, with a configuration of its own, as on two machines.
    const dirs = [tempDir(), tempDir()];
    const run = spawnWith(['mirror', 'pull'], env, tempDir(), dirs[0]);
    await until(() => pageRequests(emu).length >= 2, 'the first pull to read pages');
    // Its next pages now take 8 s each, so it still holds the lock however slowly the second one starts.
    emu.setFaults('delay:8s');
    const refused = spawnWith(['mirror', 'pull'], env, tempDir(), dirs[1]);
    const end = await refused.ended;
    const second = refused.output();
    emu.setFaults(undefined);
    expect(end.code, second.stderr).toBe(1);
    expect(second.stderr).toContain(`error: Another \`cardboard mirror pull\` is pulling into this mirror: process ${run.child.pid} on `);
    if (engine.name === 'sqlite') expect(second.stderr).toContain(`The lock is ${file}.pull.lock.`);
    // PostgreSQL's is the server's: its session named as the server knows it, and never a password.
    else expect(second.stderr).toMatch(/\(server process \d+, from (a local socket|[\d.:a-f]+), connected since \S+\)\.\n.*The lock is the advisory lock \(\d+, \d+\) on the server of postgres/s);
    expect(second.stderr).not.toMatch(/password/i);
    // The refused pull sent nothing: a pull asks for the schema first, and only the first pull did.
    expect(emu.requests().filter((r) => r.path.endsWith('/schema'))).toHaveLength(1);
    expect((await run.ended).code).toBe(0);
    expect((await engine.cards(file))).toEqual(serverCards(emu));
    // Neither pull left anything in the directory it ran in.
    expect(dirs.map((d) => readdirSync(d))).toEqual([[], []]);
  });

  it.runIf(engine.name === 'postgres')('pulls into two mirrors of one database (two schemas) at once: neither refuses the other', async () => {
    const emu = await start({ seedCards: 30, pageSize: 5, faults: 'delay:150ms' });
    const [one, two] = [await engine.mirror(), await engine.mirror()];
    const run = spawnWith(['mirror', 'pull'], emuEnv(emu, one));
    await until(() => pageRequests(emu).length >= 2, 'the first pull to read pages');
    const other = spawnWith(['mirror', 'pull'], emuEnv(emu, two));
    const ends = [await other.ended, await run.ended];
    expect(ends.map((e) => e.code), other.output().stderr).toEqual([0, 0]);
    expect(await engine.cards(two)).toEqual(serverCards(emu));
  });

  it('two pulls started at once, with cards changed and created during their walk: the mirror ends equal to the board', async () => {
    const emu = await start({ seedCards: 60, pageSize: 5, faults: 'delay:150ms' });
    const file = await engine.mirror();
    const env = emuEnv(emu, file);
    // Each in a directory of its own, with a configuration of its own, as on two machines.
    const dirs = [tempDir(), tempDir()];
    const runs = dirs.map((cwd) => spawnWith(['mirror', 'pull'], env, tempDir(), cwd));
    let ended = 0;
    for (const r of runs) void r.ended.then(() => ended++);
    await until(() => emu.requests().some((q) => q.path.endsWith('?page=2')) || ended === 2, 'a pull to ask for page 2');
    // Cards on the last pages, which no pull has read yet, change; new cards land after them.
    const cards = emu.state()[BOARD_ID]!.cards;
    for (const c of cards.slice(55)) await postCard(emu, { _id: c._id, Status: `Changed during the walk ${c._id}` });
    for (let i = 0; i < 3; i++) await postCard(emu, { Name: `Created during the walk ${i}`, Status: 'Open' });
    const ends = await Promise.all(runs.map((r) => r.ended));
    const outputs = runs.map((r) => r.output());
    // Each pull ends well, or is refused (exit 1) because the other holds the mirror; at least one pulls.
    ends.forEach((end, i) => {
      if (end.code !== 0) expect(outputs[i]!.stderr).toContain('error: Another `cardboard mirror pull` is pulling into this mirror');
      expect([0, 1], outputs[i]!.stderr).toContain(end.code);
    });
    expect(ends.map((e) => e.code)).toContain(0);
    expect(await engine.cards(file)).toEqual(serverCards(emu));
    expect(dirs.map((d) => readdirSync(d))).toEqual([[], []]);
  });

  it('status: text and --json after a pull; a board never pulled is an error naming the fix', async () => {
    const emu = await start({ seedCards: 12, pageSize: 5 });
    const file = await engine.mirror();
    const env = emuEnv(emu, file);
    const none = await runCli(['mirror', 'status'], { env });
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('mirror pull');
    expect((await runCli(['mirror', 'pull'], { env })).code).toBe(0);
    const text = await runCli(['mirror', 'status'], { env });
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain(`Mirror      ${file}\n`);
    expect(text.stdout).toContain(`Board       ${BOARD_ID} on ${emu.url}\n`);
    expect(text.stdout).toContain('Cards       12\n');
    expect(text.stdout).toMatch(/Last pull {3}#1 ended \S+ \(.*\): 3 pages, 12 cards read, 0 deleted\n/);
    expect(text.stdout).toContain('Listener    none\n');
    expect(text.stdout).toMatch(/Fresh {7}(yes|no): /);
    const json = await runCli(['mirror', 'status', '--json'], { env });
    const status = JSON.parse(json.stdout) as Record<string, unknown>;
    expect(status).toMatchObject({ location: file, board: { id: BOARD_ID, baseUrl: emu.url }, cards: 12, lastPull: { id: 1, pages: 3, cards: 12, deleted: 0 }, openPull: null, listener: null });
    expect(status.freshness).toMatchObject({ fresh: expect.any(Boolean), reason: expect.any(String) });
  });

  it('--every: states its budget, then prints a change made on the server between pulls in the JSON shape of webhook listen', async () => {
    const emu = await start({ seedCards: 12, pageSize: 5 });
    const file = await engine.mirror();
    const env = emuEnv(emu, file);
    expect((await runCli(['mirror', 'pull'], { env })).code).toBe(0);
    const configDir = tempDir();
    const run = spawnWith(['mirror', 'pull', '--every', '10s'], env, configDir);
    await until(() => run.output().stderr.includes('Next pull at'), 'the first pull of --every to end');
    expect(run.output().stderr).toContain("Pulling every 10s: 5 requests a pull (3 pages + 2; up to 25 when cards must be verified), about 30 a minute of the board's 120.");
    // The first pull of --every found nothing new: no line.
    expect(run.output().stdout).toBe('');
    const card = emu.state()[BOARD_ID]!.cards[7]!;
    await postCard(emu, { _id: card._id, Status: 'Done' });
    const created = await postCard(emu, { Name: 'Between pulls', Status: 'Open' });
    // Stopped between pulls, once the pull that found them ended.
    await until(() => run.output().stderr.split('Next pull at').length >= 3, 'the second pull of --every to end');
    run.child.kill('SIGINT');
    expect((await run.ended).signal).toBe('SIGINT');
    const lines = run.output().stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toEqual([
      { at: expect.any(String), pull: 3, change: 'changed', cardId: card._id, changes: [{ field: 'Status', before: card.Status, after: 'Done' }] },
      { at: expect.any(String), pull: 3, change: 'new', cardId: created._id, changes: [{ field: 'Name', after: 'Between pulls' }, { field: 'Status', after: 'Open' }] },
    ]);
    expect(run.output().stderr).toContain('Stopped after 2 pulls.');
  });

  it('--every shorter than 10s is refused before any request (exit 2)', async () => {
    const emu = await start();
    const r = await runCli(['mirror', 'pull', '--every', '2s'], { env: emuEnv(emu, await engine.mirror()) });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('error: --every 2s is shorter than 10s');
    expect(emu.requests()).toEqual([]);
  });
});
