// `mirror pull` against the alternative server (another page size, extra card keys, wrapped schema), whose
// board the test changes between the pages of a walk: a card deleted on a page already read shifts the
// rest left and one card is skipped (read alone by GET, kept); a card inserted in front shifts them right
// and one card is on two pages (saved once); a card created in front during the walk is missed until the
// next pull. After the next pull the mirror equals the board, as python3's sqlite3 reads it.
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/cli.js';
import { run, start } from '../conformance/helpers.js';
import { absent, ENGINES } from '../helpers/engines.js';
import { altEnv, byId } from './pull-helpers.js';

const cardGets = (alt: { requests: { method: string; url: string }[] }) => alt.requests.filter((r) => r.method === 'GET' && r.url.includes('/card/')).map((r) => decodeURIComponent(r.url.split('/card/')[1]!));

describe.each(ENGINES)('mirror pull over pages that shift (alternative server, spawned CLI) ($name)', (engine) => {
  if (absent(engine)) return;

  it('a card skipped by a deletion on an earlier page is verified by GET and kept; the deleted one goes at the next pull', async () => {
    const alt = await start({ pageSize: 7 });
    alt.seed(21);
    const file = await engine.mirror();
    const env = altEnv(alt, file);
    const configDir = tempDir();
    expect((await run(alt, ['mirror', 'pull'], { spawn: true, env, configDir })).code).toBe(0);
    const deleted = alt.cards[0]!._id as string;
    const skipped = alt.cards[7]!._id as string;
    alt.hooks.beforePage = (page) => {
      // After page 0 was read: its first card goes, and the first card of page 1 moves onto page 0.
      if (page === 1 && alt.cards[0]!._id === deleted) alt.cards.splice(0, 1);
    };
    alt.requests.length = 0;
    const second = await run(alt, ['mirror', 'pull', '--json'], { spawn: true, env, configDir });
    expect(second.code, second.stderr).toBe(0);
    // No page showed the skipped card: read alone, found, kept. The deleted card was read on page 0.
    expect(cardGets(alt)).toEqual([skipped]);
    expect(JSON.parse(second.stdout)).toMatchObject({ verified: 1, deleted: 0, unconfirmed: 0, total: 21 });
    expect((await engine.cards(file))[skipped]).toEqual(alt.cards.find((c) => c._id === skipped));
    alt.hooks.beforePage = undefined;
    alt.requests.length = 0;
    const third = await run(alt, ['mirror', 'pull', '--json'], { spawn: true, env, configDir });
    expect(third.code, third.stderr).toBe(0);
    // Now no page shows the deleted card: read alone, 404, deleted.
    expect(cardGets(alt)).toEqual([deleted]);
    expect(JSON.parse(third.stdout)).toMatchObject({ verified: 1, deleted: 1, total: 20 });
    expect((await engine.cards(file))).toEqual(byId(alt.cards));
  });

  it('cards created, changed and deleted during the walk, under 500s and 503s: the next pull leaves the mirror equal to the board', async () => {
    const alt = await start({ pageSize: 7 });
    alt.seed(30);
    const file = await engine.mirror();
    const env = altEnv(alt, file);
    const configDir = tempDir();
    expect((await run(alt, ['mirror', 'pull'], { spawn: true, env, configDir })).code).toBe(0);
    expect((await engine.cards(file))).toEqual(byId(alt.cards));
    const early = alt.cards[0]!;
    const late = alt.cards[25]!;
    const readThenDeleted = alt.cards[3]!._id as string;
    const skipped = alt.cards[14]!._id as string;
    const gone = alt.cards[20]!._id as string;
    const front = { _id: 'inserted-in-front', Title: 'Inserted in front', Status: 'Open' };
    alt.hooks.beforePage = (page) => {
      if (page === 2 && alt.cards.some((c) => c._id === gone)) {
        // Pages 0 and 1 were read: a card of page 0 goes, so the first card of page 2 moves onto page 1.
        alt.cards.splice(3, 1);
        // A card of a page not read yet goes: the mirror had it from the last pull, no page shows it now.
        alt.cards.splice(alt.cards.findIndex((c) => c._id === gone), 1);
        early.Status = 'Changed on a page read';
        late.Status = 'Changed on a page not read';
        alt.cards.push({ _id: 'created-at-the-end', Title: 'Created during the walk', Status: 'Open' });
      }
      if (page === 3 && alt.cards[0]!._id !== front._id) alt.cards.unshift(front); // one card is on pages 2 and 3
    };
    alt.faults.push({ method: 'GET', status: 500 }, { method: 'GET', status: 503, headers: { 'retry-after': '1' } }, { method: 'GET', status: 502 });
    alt.requests.length = 0;
    const second = await run(alt, ['mirror', 'pull', '--json'], { spawn: true, env, configDir });
    expect(second.code, second.stderr).toBe(0);
    expect(alt.faults).toEqual([]);
    // Read alone: the skipped card (found, kept) and the deleted one (404, deleted).
    expect(cardGets(alt).sort()).toEqual([skipped, gone].sort());
    expect(JSON.parse(second.stdout)).toMatchObject({ verified: 2, deleted: 1, unconfirmed: 0 });
    const mirror = (await engine.cards(file));
    expect(mirror[late._id as string]!.Status).toBe('Changed on a page not read');
    expect(mirror['created-at-the-end']).toBeDefined();
    expect(mirror[gone]).toBeUndefined();
    expect(mirror[skipped]).toEqual(alt.cards.find((c) => c._id === skipped));
    // What one walk cannot see: a change or a deletion on a page already read, a card created in front of the reader.
    expect(mirror[readThenDeleted]).toBeDefined();
    expect(mirror[early._id as string]!.Status).not.toBe('Changed on a page read');
    expect(mirror[front._id]).toBeUndefined();
    alt.hooks.beforePage = undefined;
    const third = await run(alt, ['mirror', 'pull'], { spawn: true, env, configDir });
    expect(third.code, third.stderr).toBe(0);
    expect((await engine.cards(file))).toEqual(byId(alt.cards));
  });
});
