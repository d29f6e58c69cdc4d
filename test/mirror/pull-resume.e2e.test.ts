// `mirror pull` walks that meet pages made only of cards they already saved (alternative server, spawned CLI):
// cards inserted in front of the reader, between a kill -9 and the resume or during the walk, are no proof
// that the server repeats itself, and the pull finishes; a server that does repeat itself (one page for ever,
// or pages in a cycle) still ends the walk with an error naming `--restart`; `--restart` abandons an
// unfinished pull and reads the board from page 0.
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/cli.js';
import { run, start } from '../conformance/helpers.js';
import type { AltServer } from '../conformance/alt-server.js';
import { absent, type Engine, ENGINES } from '../helpers/engines.js';
import { altEnv, byId, spawnWith } from './pull-helpers.js';

const pageReads = (alt: AltServer) => alt.requests.filter((r) => r.method === 'GET' && r.url.includes('?page=')).length;

/** `n` cards put in front of the board's list, as a server ordering newest first would show them. */
function insertInFront(alt: AltServer, n: number, tag: string): void {
  for (let i = 0; i < n; i++) alt.cards.unshift({ _id: `${tag}-${i}`, Title: `Inserted ${i}`, Status: 'Open' });
}

/** A pull of 70 cards (10 pages of 7) killed with -9 when it asks for page 5: pages 0 to 3 or 4 are saved. */
async function killedPull(engine: Engine): Promise<{ alt: AltServer; env: Record<string, string>; configDir: string; file: string }> {
  const alt = await start({ pageSize: 7 });
  alt.seed(70);
  const file = await engine.mirror();
  const env = altEnv(alt, file);
  const configDir = tempDir();
  const first = spawnWith(['mirror', 'pull'], env, configDir);
  alt.hooks.beforePage = (page) => {
    if (page === 5) first.child.kill('SIGKILL');
  };
  expect((await first.ended).signal).toBe('SIGKILL');
  alt.hooks.beforePage = undefined;
  alt.requests.length = 0;
  return { alt, env, configDir, file };
}

describe.each(ENGINES)('mirror pull through pages of cards it already saved (alternative server, spawned CLI) ($name)', (engine) => {
  if (absent(engine)) return;

  it('20 cards inserted in front between a kill -9 and the resume: the resume goes through the pages it had read and finishes', async () => {
    const { alt, env, configDir, file } = await killedPull(engine);
    // The page the resume starts at, and the one after it, now hold cards saved before the kill.
    insertInFront(alt, 20, 'front');
    const resumed = await run(alt, ['mirror', 'pull', '--json'], { spawn: true, env, configDir });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toMatch(/Resuming pull #1 begun \S+ at page [45] /);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ pull: 1, deleted: 0, unconfirmed: 0 });
    // The cards inserted in front of the reader are for the next pull, which leaves the mirror equal to the board.
    expect((await engine.cards(file))['front-0']).toBeUndefined();
    const next = await run(alt, ['mirror', 'pull', '--json'], { spawn: true, env, configDir });
    expect(next.code, next.stderr).toBe(0);
    expect(JSON.parse(next.stdout)).toMatchObject({ pull: 2, new: 20, total: 90 });
    expect((await engine.cards(file))).toEqual(byId(alt.cards));
  });

  it('more than two pages inserted in front during the walk: the pull goes through the pages it read again and finishes', async () => {
    const alt = await start({ pageSize: 7 });
    alt.seed(42);
    const file = await engine.mirror();
    const env = altEnv(alt, file);
    alt.hooks.beforePage = (page) => {
      if (page === 4 && !alt.cards.some((c) => c._id === 'walk-0')) insertInFront(alt, 17, 'walk');
    };
    const r = await run(alt, ['mirror', 'pull', '--json'], { spawn: true, env });
    expect(r.code, r.stderr).toBe(0);
    // Pages 4 and 5 hold cards of pages 1 to 3 again; 59 cards in 9 pages, and the empty one.
    expect(JSON.parse(r.stdout)).toMatchObject({ pages: 9, cards: 59, new: 42, total: 42 });
    expect(pageReads(alt)).toBe(10);
  });

  it('a server that answers one page for ever: the walk ends at the third sight of it, with an error naming --restart, each time', async () => {
    const { alt, env, configDir, file } = await killedPull(engine);
    // From page 6 on, the server answers page 6 whatever is asked.
    alt.hooks.servePage = (page) => Math.min(page, 6);
    const r = await run(alt, ['mirror', 'pull'], { spawn: true, env, configDir });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`error: Page 8 of board ${alt.opts.boardId} on ${alt.url} holds only cards this pull already read (the same cards as the 2 pages before it); the pull stopped`);
    expect(r.stderr).toContain('`cardboard mirror pull --restart` abandons this pull and reads the board again from page 0.');
    expect(r.stderr).not.toMatch(/\n\s+at /);
    // Pages 4 or 5 to 8: at most 5 page reads.
    expect(pageReads(alt)).toBeLessThanOrEqual(5);
    alt.requests.length = 0;
    const again = await run(alt, ['mirror', 'pull'], { spawn: true, env, configDir });
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('holds only cards this pull already read (the same cards as the 2 pages before it)');
    expect(pageReads(alt)).toBe(3);
    // The server mended, --restart reads the board again from page 0.
    alt.hooks.servePage = undefined;
    const mended = await run(alt, ['mirror', 'pull', '--restart'], { spawn: true, env, configDir });
    expect(mended.code, mended.stderr).toBe(0);
    expect((await engine.cards(file))).toEqual(byId(alt.cards));
  });

  it('a server that answers pages in a cycle: the walk ends once the run of pages already read holds more cards than the pull read', async () => {
    const alt = await start({ pageSize: 7 });
    alt.seed(70);
    const env = altEnv(alt, await engine.mirror());
    // Pages 0 to 3, then 0, 1, 0, 1… : never the same page twice in a row.
    alt.hooks.servePage = (page) => (page < 4 ? page : page % 2);
    const r = await run(alt, ['mirror', 'pull'], { spawn: true, env });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('error: Page 8 of board');
    expect(r.stderr).toContain('holds only cards this pull already read (5 pages in a row with 35 cards, more than the 28 the pull had read)');
    expect(pageReads(alt)).toBe(9);
  });

  it('--restart abandons the pull a kill -9 left and reads every page from 0: a card the abandoned pull saw and the board lost is deleted', async () => {
    const { alt, env, configDir, file } = await killedPull(engine);
    const lost = alt.cards.splice(2, 1)[0]!._id as string;
    expect((await engine.cards(file))[lost]).toBeDefined();
    const r = await run(alt, ['mirror', 'pull', '--restart', '--json'], { spawn: true, env, configDir });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/^Abandoned pull #1 begun \S+ at page [45]; reading the board from page 0\.$/m);
    expect(r.stderr).not.toContain('Resuming');
    // 69 cards: pages 0 to 9 and the empty one; the lost card, seen by the abandoned pull only, is read alone: 404.
    expect(pageReads(alt)).toBe(11);
    expect(JSON.parse(r.stdout)).toMatchObject({ pages: 10, cards: 69, verified: 1, deleted: 1, total: 69 });
    expect(JSON.parse(r.stdout)).not.toHaveProperty('resumedAt');
    expect((await engine.cards(file))).toEqual(byId(alt.cards));
    const status = await run(alt, ['mirror', 'status', '--json'], { spawn: true, env, configDir });
    expect(JSON.parse(status.stdout)).toMatchObject({ openPull: null, lastPull: { id: 1, pages: 10, cards: 69, deleted: 1 } });
    // With no unfinished pull, --restart says so and pulls.
    const none = await run(alt, ['mirror', 'pull', '--restart'], { spawn: true, env, configDir });
    expect(none.code, none.stderr).toBe(0);
    expect(none.stderr).toContain('No unfinished pull to abandon; reading the board from page 0.');
  });
});
