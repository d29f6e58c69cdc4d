// import --match-on --mirror: the key index from a fresh mirror (no page request), the pages when it is stale,
// and the run's own cards saved to the mirror, so the next --mirror run finds them; on each engine.
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { MirrorStore } from '../../src/mirror/types.js';
import type { Card } from '../../src/spec-types.js';
import { cli } from '../commands/helpers.js';
import { call } from '../emulator/http.js';
import { tempDir } from '../helpers/cli.js';
import { BOARD_ID, pageRequests, TOKEN } from '../helpers/emulator.js';
import { absent, type Engine, ENGINES } from '../helpers/engines.js';
import { fillMirror, openTestMirror } from '../helpers/mirror.js';
import { nameCounts, posts, spawnCli, start, until, writeCards } from './helpers.js';

/** A mirror of its own for the test, given to the CLI and to the test's own store by CARDBOARD_MIRROR. */
async function mirrorEnv(engine: Engine): Promise<Record<string, string>> {
  return { CARDBOARD_MIRROR: await engine.mirror() };
}

/** Open the test's mirror of the emulator's board; the caller closes it. */
function store(url: string, env: Record<string, string>): Promise<MirrorStore> {
  return openTestMirror(env, { baseUrl: url, id: BOARD_ID });
}

/** Fill the mirror with `cards` by one complete pull that ended at `at` (its age is what --max-age judges). */
function fill(url: string, env: Record<string, string>, cards: readonly Card[], at = new Date()): Promise<void> {
  return fillMirror(env, { baseUrl: url, id: BOARD_ID }, cards, { at: at.toISOString() });
}

/** The file with the Status of the rows named set to `status`, as a new file. */
function edited(file: string, names: string[], status: string): string {
  const lines = readFileSync(file, 'utf8').split('\n').map((l) => (names.includes(l.split(',')[0]!) ? l.replace(',Open,', `,${status},`) : l));
  const out = join(tempDir('cardboard-import-'), 'edited.csv');
  writeFileSync(out, lines.join('\n'));
  return out;
}

describe.each(ENGINES)('import --match-on --mirror ($name)', (engine) => {
  if (absent(engine)) return;

  it('a fresh mirror: the changed rows only, no page request; the mirror holds the updates', async () => {
    const e = await start();
    const env = await mirrorEnv(engine);
    const file = writeCards(30, 'm');
    expect((await cli(e, ['import', file, '--match-on', 'Name'])).code).toBe(0);
    await fill(e.url, env, e.state()[BOARD_ID]!.cards as Card[]);
    const changed = edited(file, ['m-3', 'm-17', 'm-30'], 'Done');

    e.resetRequests();
    const r = await cli(e, ['import', changed, '--match-on', 'Name', '--mirror', '--json'], { env });
    expect(r.code).toBe(0);
    const summary = JSON.parse(r.stdout);
    expect(summary).toMatchObject({ rows: 30, created: 0, updated: 3, unchanged: 27, index: { from: 'mirror', cards: 30, reason: expect.stringMatching(/^pulled \d+s ago$/) }, mirror: { location: env.CARDBOARD_MIRROR, saved: 3 } });
    expect(r.stderr).toMatch(/Key index for --match-on Name from the mirror \(pulled \d+s ago\): 30 cards, no page read\./);
    expect(pageRequests(e).length).toBe(0);
    expect(posts(e)).toBe(3);

    const s = await store(e.url, env);
    try {
      const done = [...s.cards()].filter((c) => c.Status === 'Done').map((c) => c.Name).sort();
      expect(done).toEqual(['m-17', 'm-3', 'm-30']);
    } finally {
      s.close();
    }

    // --dry-run the same: no page, and the changes compared with the mirror's cards (no GET at all).
    e.resetRequests();
    const dry = await cli(e, ['import', edited(changed, ['m-4'], 'Done'), '--match-on', 'Name', '--mirror', '--dry-run', '--json'], { env });
    expect(JSON.parse(dry.stdout)).toMatchObject({ updated: 1, unchanged: 29, index: { from: 'mirror' }, changes: [{ line: 5, changes: [{ field: 'Status', from: 'Open', to: 'Done' }] }] });
    expect(e.requests().filter((r) => r.method === 'GET' && !r.path.endsWith('/schema'))).toHaveLength(0);
  });

  it('a mirror older than --max-age says so and reads the pages; a longer --max-age uses it', async () => {
    const e = await start();
    const env = await mirrorEnv(engine);
    const file = writeCards(5, 's');
    await cli(e, ['import', file, '--match-on', 'Name']);
    await fill(e.url, env, e.state()[BOARD_ID]!.cards as Card[], new Date(Date.now() - 30 * 60_000));

    e.resetRequests();
    const stale = await cli(e, ['import', file, '--match-on', 'Name', '--mirror', '--json'], { env });
    expect(stale.code).toBe(0);
    expect(stale.stderr).toMatch(/^warning: The mirror is not used for --match-on Name: pulled 30m ago \(older than --max-age 15m\)\. Reading the board's pages\.$/m);
    expect(JSON.parse(stale.stdout)).toMatchObject({ unchanged: 5, index: { from: 'pages', pages: 1, cards: 5 } });
    expect(pageRequests(e).length).toBeGreaterThan(0);

    e.resetRequests();
    const longer = await cli(e, ['import', file, '--match-on', 'Name', '--mirror', '--max-age', '1h', '--json'], { env });
    expect(JSON.parse(longer.stdout)).toMatchObject({ unchanged: 5, index: { from: 'mirror', reason: 'pulled 30m ago' } });
    expect(pageRequests(e).length).toBe(0);

    // No mirror at all: the same, with where it was looked for.
    const nowhere = engine.name === 'sqlite' ? join(tempDir(), 'none.db') : await engine.mirror();
    const none = await cli(e, ['import', file, '--match-on', 'Name', '--mirror'], { env: { CARDBOARD_MIRROR: nowhere } });
    expect(none.code).toBe(0);
    expect(none.stderr).toContain(`warning: The mirror is not used for --match-on Name: no mirror at ${nowhere} (cardboard mirror pull makes one).`);
  });

  it('a second --mirror run right after the first creates no card again: the mirror holds the first run\'s cards', async () => {
    const e = await start();
    const env = await mirrorEnv(engine);
    await fill(e.url, env, []);
    const file = writeCards(20, 'n');
    const first = await cli(e, ['import', file, '--match-on', 'Name', '--mirror', '--json'], { env });
    expect(JSON.parse(first.stdout)).toMatchObject({ created: 20, mirror: { saved: 20 } });

    // Another copy of the file (another journal: nothing remembered) with two rows changed.
    const copy = join(tempDir('cardboard-import-'), 'again.csv');
    copyFileSync(edited(file, ['n-2', 'n-9'], 'Done'), copy);
    e.resetRequests();
    const second = await cli(e, ['import', copy, '--match-on', 'Name', '--mirror', '--json'], { env });
    expect(JSON.parse(second.stdout)).toMatchObject({ created: 0, updated: 2, unchanged: 18 });
    expect(pageRequests(e).length).toBe(0);
    expect(posts(e)).toBe(2);
    expect([...nameCounts(e).values()].every((n) => n === 1)).toBe(true);
    expect(e.state()[BOARD_ID]!.cards).toHaveLength(20);

    // The first file again: its journal remembers a complete run, which --match-on does not use (every row
    // goes by its key), so nothing is read back: the schema and the two rows the copy changed, nothing else.
    e.resetRequests();
    const third = await cli(e, ['import', file, '--match-on', 'Name', '--mirror', '--json'], { env });
    expect(JSON.parse(third.stdout)).toMatchObject({ created: 0, updated: 2, unchanged: 18 });
    expect(e.requests().map((r) => `${r.method} ${r.path.replace(/\?.*/, '')}`).sort()).toEqual([`GET /api/aptlet/${BOARD_ID}/schema`, `POST /api/aptlet/${BOARD_ID}`, `POST /api/aptlet/${BOARD_ID}`]);
  });

  it('a key two cards of the mirror hold is rejected as with the pages', async () => {
    const e = await start();
    const env = await mirrorEnv(engine);
    for (const Status of ['Open', 'Done']) await call(e, 'POST', `/api/aptlet/${BOARD_ID}`, { token: TOKEN, body: { Name: 'twin', Status } });
    await fill(e.url, env, e.state()[BOARD_ID]!.cards as Card[]);
    const file = join(tempDir('cardboard-import-'), 'twin.csv');
    writeFileSync(file, 'Name,Status\ntwin,Open\nsolo,Open\n');

    const reason = async (extra: string[]) => {
      const r = await cli(e, ['import', file, '--match-on', 'Name', '--restart', ...extra], { env });
      expect(r.code).toBe(3);
      return /line 2: (.*)$/m.exec(r.stderr)?.[1];
    };
    e.resetRequests();
    const fromMirror = await reason(['--mirror']);
    expect(pageRequests(e).length).toBe(0);
    expect(fromMirror).toMatch(/^Name 'twin' matches 2 cards \(.+, .+\); not sent$/);
    expect(await reason([])).toBe(fromMirror);
  });

  it("an _id from the mirror whose card is gone from the board: the row is created, the run goes on, the mirror forgets it", async () => {
    const e = await start();
    const env = await mirrorEnv(engine);
    // The mirror believes in a card the board no longer holds (deleted since it was pulled).
    await fill(e.url, env, [{ _id: 'gone-card', Name: 'g-1', Status: 'Open' }]);
    const file = join(tempDir('cardboard-import-'), 'gone.csv');
    writeFileSync(file, 'Name,Status\ng-1,Done\ng-2,Open\n');
    const r = await cli(e, ['import', file, '--match-on', 'Name', '--mirror', '--json'], { env });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ created: 2, updated: 0 });
    expect(nameCounts(e)).toEqual(new Map([['g-1', 1], ['g-2', 1]]));

    const s = await store(e.url, env);
    try {
      expect(s.card('gone-card')).toBeUndefined();
      expect([...s.cards()].map((c) => c.Name).sort()).toEqual(['g-1', 'g-2']);
    } finally {
      s.close();
    }
    // And the next run finds one card per key, not two.
    const again = await cli(e, ['import', file, '--match-on', 'Name', '--mirror', '--json', '--restart'], { env });
    expect(JSON.parse(again.stdout)).toMatchObject({ unchanged: 2, rejected: 0 });
  });

  it('kill -9 at any moment: every card the journal says a row made is in the mirror, and later --mirror runs make no duplicate', async () => {
    const e = await start({ faults: 'delay:40ms' });
    const env = await mirrorEnv(engine);
    await fill(e.url, env, []);
    const file = writeCards(60, 'k');
    const journal = join(tempDir(), 'k.journal');
    const made = () => {
      let text = '';
      try {
        text = readFileSync(journal, 'utf8');
      } catch {
        // not written yet
      }
      return text.split('\n').flatMap((l) => /^\d+\t(?:created|updated)\t([^\t]+)\t/.exec(l)?.slice(1) ?? []);
    };
    // --timeout 2s: the resume waits that long (the killed run's timeout) for its requests in flight.
    const args = ['--timeout', '2s', 'import', file, '--match-on', 'Name', '--mirror', '--journal', journal];
    for (const target of [5, 17, 31]) {
      const run = spawnCli(e, args, undefined, BOARD_ID, env);
      await until(() => made().length >= target || run.child.exitCode !== null);
      run.child.kill('SIGKILL');
      await run.exit;
      const s = await store(e.url, env);
      try {
        const missing = made().filter((id) => s.card(id) === undefined);
        expect(missing).toEqual([]);
      } finally {
        s.close();
      }
    }
    const resumed = await cli(e, [...args, '--json'], { env });
    expect(resumed.code, resumed.stderr).toBe(0);
    // A later run of another copy (no journal to remember anything) finds every card in the mirror.
    const copy = join(tempDir('cardboard-import-'), 'copy.csv');
    copyFileSync(file, copy);
    e.resetRequests();
    const again = await cli(e, ['import', copy, '--match-on', 'Name', '--mirror', '--json'], { env });
    expect(JSON.parse(again.stdout)).toMatchObject({ created: 0, unchanged: 60 });
    expect(pageRequests(e).length).toBe(0);
    expect(nameCounts(e).size).toBe(60);
    expect([...nameCounts(e).values()].every((n) => n === 1)).toBe(true);
  });

  it('--mirror needs --match-on, --max-age needs --mirror (exit 2, nothing read)', async () => {
    const e = await start();
    const file = writeCards(2, 'u');
    const noKey = await cli(e, ['import', file, '--mirror']);
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toMatch(/^error: --mirror needs --match-on FIELD/m);
    const noMirror = await cli(e, ['import', file, '--match-on', 'Name', '--max-age', '5m']);
    expect(noMirror.code).toBe(2);
    expect(noMirror.stderr).toMatch(/^error: --max-age applies to --mirror\./m);
    expect(e.requests()).toHaveLength(0);
  });
});
