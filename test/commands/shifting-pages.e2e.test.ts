// Pages that shift while `card list` reads them: a server whose page p starts p cards early (as if a card
// were created ahead of the reader before each read) serves 45 rows for a board of 40 cards. Each card is
// printed once, by `_id`, and stderr says once, at the end, that pages shifted; --quiet says nothing.
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { hostileEnv, useHostileServer } from '../helpers/hostile-server.js';

const hostile = useHostileServer(afterEach);
const CARDS = Array.from({ length: 40 }, (_, i) => ({ _id: `card${String(i).padStart(4, '0')}`, Title: `t${i}`, Status: 'Open' }));
const NOTE = 'note: pages shifted while they were read: 5 cards seen twice were printed once; run again for a consistent listing';

describe('card list over shifting pages (spawned CLI, real HTTP)', () => {
  for (const format of ['ndjson', 'csv', 'json'] as const) {
    it(`--all --format ${format}: 40 cards, each once, and one note at the end`, async () => {
      const s = await hostile('shifting-pages', { cards: CARDS, pageSize: 8 });
      const r = await runCli(['card', 'list', '--all', '--format', format], { env: hostileEnv(s), spawn: true });
      expect(r.code, r.stderr).toBe(0);
      const ids =
        format === 'ndjson'
          ? r.stdout.trim().split('\n').map((l) => (JSON.parse(l) as { _id: string })._id)
          : format === 'json'
            ? (JSON.parse(r.stdout) as { _id: string }[]).map((c) => c._id)
            : r.stdout.trim().split('\r\n').slice(1).map((l) => l.split(',')[0]!);
      expect(ids).toHaveLength(40);
      expect(new Set(ids).size).toBe(40);
      expect(ids).toEqual(CARDS.map((c) => c._id));
      expect(r.stderr.split('\n').filter((l) => l.includes('pages shifted'))).toEqual([NOTE]);
      expect(r.stderr.trimEnd().endsWith(NOTE)).toBe(true);
      // Six pages with cards and the empty one that ends the walk: 45 rows served.
      expect(s.requests.filter((q) => q.url.includes('?page=')).length).toBe(7);
    });
  }
  it('--limit across pages counts each card once; --quiet prints no note', async () => {
    const s = await hostile('shifting-pages', { cards: CARDS, pageSize: 8 });
    const r = await runCli(['card', 'list', '--limit', '20'], { env: hostileEnv(s), spawn: true });
    expect(r.code, r.stderr).toBe(0);
    const ids = r.stdout.trim().split('\n').map((l) => (JSON.parse(l) as { _id: string })._id);
    expect(ids).toEqual(CARDS.slice(0, 20).map((c) => c._id));
    expect(r.stderr).toContain('note: pages shifted while they were read: 2 cards seen twice were printed once');
    const quiet = await runCli(['--quiet', 'card', 'list', '--all'], { env: hostileEnv(s), spawn: true });
    expect(quiet.code, quiet.stderr).toBe(0);
    expect(quiet.stdout.trim().split('\n')).toHaveLength(40);
    expect(quiet.stderr).toBe('');
  });
  it('pages that do not shift: no note', async () => {
    const s = await hostile('plain', { cards: CARDS, pageSize: 8 });
    const r = await runCli(['card', 'list', '--all'], { env: hostileEnv(s), spawn: true });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim().split('\n')).toHaveLength(40);
    expect(r.stderr).toBe('');
  });
});
