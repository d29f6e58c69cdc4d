// The reconcile at the end of a complete `mirror pull` walk (alternative server, spawned CLI): the cards no
// page showed are read alone (GET) at most max(20, pages read) of them; the others are kept, unconfirmed,
// counted in the summary, and settled by a later pull; a card that two complete pulls in a row did not see
// is deleted without a request.
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/cli.js';
import { run, start } from '../conformance/helpers.js';
import type { AltServer } from '../conformance/alt-server.js';
import { absent, type Engine, ENGINES } from '../helpers/engines.js';
import { altEnv, byId } from './pull-helpers.js';

const cardGets = (alt: AltServer) => alt.requests.filter((r) => r.method === 'GET' && r.url.includes('/card/')).map((r) => decodeURIComponent(r.url.split('/card/')[1]!));

/**
 * A board of 30 cards pulled once, then 25 of them gone (the first 5 stay, on one page): the next pull can
 * read 20 alone. Returns the gone cards' ids in board order.
 */
async function mostCardsGone(engine: Engine): Promise<{ alt: AltServer; env: Record<string, string>; configDir: string; file: string; gone: string[] }> {
  const alt = await start({ pageSize: 7 });
  alt.seed(30);
  const file = await engine.mirror();
  const env = altEnv(alt, file);
  const configDir = tempDir();
  const first = await run(alt, ['mirror', 'pull'], { spawn: true, env, configDir });
  expect(first.code, first.stderr).toBe(0);
  const gone = alt.cards.splice(5, 25).map((c) => c._id as string);
  alt.requests.length = 0;
  return { alt, env, configDir, file, gone };
}

describe.each(ENGINES)('the reconcile of mirror pull (alternative server, spawned CLI) ($name)', (engine) => {
  if (absent(engine)) return;

  it('past the GET budget, unseen cards are kept unconfirmed and counted; the next pull settles them', async () => {
    const { alt, env, configDir, file, gone } = await mostCardsGone(engine);
    const second = await run(alt, ['mirror', 'pull'], { spawn: true, env, configDir });
    expect(second.code, second.stderr).toBe(0);
    // One page read: the budget is 20 GETs, the first 20 unseen cards in board order (each 404: deleted).
    expect(cardGets(alt)).toEqual(gone.slice(0, 20));
    expect(second.stderr).toMatch(/Pulled 1 page, 5 cards: 0 new, 0 changed, 20 deleted; 20 verified by GET, 5 kept unconfirmed; 23 requests in /);
    const kept = Object.keys((await engine.cards(file)));
    expect(kept.sort()).toEqual([...alt.cards.map((c) => c._id as string), ...gone.slice(20)].sort());
    alt.requests.length = 0;
    const third = await run(alt, ['mirror', 'pull', '--json'], { spawn: true, env, configDir });
    expect(third.code, third.stderr).toBe(0);
    expect(JSON.parse(third.stdout)).toMatchObject({ deleted: 5, unconfirmed: 0, total: 5 });
    expect((await engine.cards(file))).toEqual(byId(alt.cards));
  });

  it('a card two complete pulls in a row did not see is deleted without a request; one a page shows again is kept', async () => {
    const { alt, env, configDir, file, gone } = await mostCardsGone(engine);
    expect((await run(alt, ['mirror', 'pull'], { spawn: true, env, configDir })).stderr).toContain('5 kept unconfirmed');
    const unconfirmed = gone.slice(20);
    // Before the next pull: one kept card is on the board again (it had been out of sight), and a card the
    // last pull saw is deleted (no pull missed it yet).
    const back = unconfirmed[4]!;
    alt.cards.push({ _id: back, Title: 'Back in sight', Status: 'Open' });
    const newlyGone = alt.cards.splice(0, 1)[0]!._id as string;
    alt.requests.length = 0;
    const third = await run(alt, ['mirror', 'pull', '--json'], { spawn: true, env, configDir });
    expect(third.code, third.stderr).toBe(0);
    // Only the card no pull had missed yet is read alone; the four missed twice go without a request.
    expect(cardGets(alt)).toEqual([newlyGone]);
    expect(JSON.parse(third.stdout)).toMatchObject({ verified: 1, deleted: 5, unconfirmed: 0, requests: 4, total: 5 });
    const mirror = (await engine.cards(file));
    for (const id of [...unconfirmed.slice(0, 4), newlyGone]) expect(mirror[id]).toBeUndefined();
    expect(mirror[back]).toMatchObject({ Title: 'Back in sight' });
    expect(mirror).toEqual(byId(alt.cards));
  });
});
