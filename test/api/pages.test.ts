// The one page walk (api cardPages) that `card list --all`, the --match-on
// index and its re-checks share. A page made only of cards seen before stops it; a page holding a
// null, a number or a card without `_id` is a clear error naming the page and the index.
import { describe, expect, it } from 'vitest';
import { apiOver } from '../../src/api/index.js';
import type { ApiContext, PagesRead, ResolvedBoard } from '../../src/api/types.js';
import { CardboardError } from '../../src/errors.js';
import { type Http, Pacer } from '../../src/http/index.js';
import { loadKeyIndex } from '../../src/import/match-index.js';
import { SeenIds } from '../../src/api/seen-ids.js';

/** An Api over a fake client whose page N is `pages(N)`; counts the pages asked for. */
function pagedApi(pages: (page: number) => unknown[]) {
  const asked: number[] = [];
  const http = {
    baseUrl: 'http://svc',
    pacer: new Pacer(),
    get: async (_path: string, query?: Record<string, string | number>) => {
      const page = Number(query?.page);
      asked.push(page);
      return pages(page);
    },
  } as unknown as Http;
  const api = apiOver(http, { id: 'b1', baseUrl: 'http://svc' } as ResolvedBoard, {} as ApiContext);
  return { api, asked };
}

const card = (id: string) => ({ _id: id, Name: id.toUpperCase() });

async function walk(api: ReturnType<typeof pagedApi>['api'], onPage?: (r: PagesRead) => void): Promise<string[]> {
  const ids: string[] = [];
  for await (const page of api.cardPages({ onPage })) for (const c of page) ids.push(c._id);
  return ids;
}

describe('the page walk', () => {
  it('stops at a page that repeats the page before it, naming the page (a server that would loop forever)', async () => {
    const { api, asked } = pagedApi(() => [card('a'), card('b')]);
    const err = await walk(api).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CardboardError);
    expect((err as CardboardError).exitCode).toBe(1);
    expect((err as Error).message).toMatch(/^Page 1 of http:\/\/svc\/api\/aptlet\/b1 repeats 2 cards already seen on earlier pages; the listing stopped/);
    expect(asked).toEqual([0, 1]);
  });

  it('stops at a page that repeats one further back, and lets pages that only overlap (cards shifting) through', async () => {
    const pages = [[card('a'), card('b')], [card('b'), card('c')], [card('d'), card('a')], [card('c'), card('b')], [card('e')]];
    const { api, asked } = pagedApi((n) => pages[n] ?? []);
    const ids: string[] = [];
    const err = await (async () => {
      for await (const page of api.cardPages()) for (const c of page) ids.push(c._id);
    })().catch((e: unknown) => e);
    expect((err as Error).message).toContain('Page 3 of');
    expect(ids).toEqual(['a', 'b', 'b', 'c', 'd', 'a']);
    expect(asked).toEqual([0, 1, 2, 3]);
  });

  it('reads a well-behaved board to its empty page and reports pages and cards read as it goes', async () => {
    const pages = [[card('a'), card('b')], [card('b'), card('c')], [card('d')]];
    const { api } = pagedApi((n) => pages[n] ?? []);
    const seen: PagesRead[] = [];
    expect(await walk(api, (r) => seen.push(r))).toEqual(['a', 'b', 'b', 'c', 'd']);
    expect(seen).toEqual([
      { page: 0, pages: 1, cards: 2 },
      { page: 1, pages: 2, cards: 4 },
      { page: 2, pages: 3, cards: 5 },
    ]);
  });

  it.each([
    [[card('a'), null], 'null at index 1'],
    [[card('a'), card('b'), 7], 'a number at index 2'],
    [[{ Name: 'no id' }], 'an object without a string `_id` at index 0'],
    [[{ _id: 5 }], 'an object without a string `_id` at index 0'],
    [[[card('a')]], 'an array at index 0'],
  ])('a page holding %j is an error naming the page and the index', async (page, what) => {
    const { api } = pagedApi((n) => (n === 0 ? (page as unknown[]) : []));
    const err = await api.listCards(0).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CardboardError);
    expect((err as Error).message).toBe(`The service answered page 0 of http://svc/api/aptlet/b1 with ${what}, not a card with a string \`_id\`; the listing stopped.`);
  });

  it('--match-on: the index read stops on a repeated page instead of filling memory', async () => {
    const { api, asked } = pagedApi((n) => (n < 3 ? [card(`x${n}`), card(`y${n}`)] : [card('x1'), card('y2')]));
    await expect(loadKeyIndex(api, 'Name', ['Name'])).rejects.toThrow(/^Page 3 of .* repeats 2 cards already seen on earlier pages/);
    expect(asked).toEqual([0, 1, 2, 3]);
  });
});

describe('--match-on: the index is the seen set', () => {
  it('stops on a page of cards already in the index, keyed or not, and not on a card whose key changed', async () => {
    const keyless = (id: string) => ({ _id: id });
    // Page 2 repeats a keyed and a keyless card; page 1's `a` was edited (new key) between the reads.
    const pages = [[card('a'), keyless('k1')], [{ _id: 'a', Name: 'A2' }, card('b')], [card('b'), keyless('k1')]];
    const { api, asked } = pagedApi((n) => pages[n] ?? []);
    await expect(loadKeyIndex(api, 'Name', ['Name'])).rejects.toThrow(/^Page 2 of .* repeats 2 cards already seen on earlier pages/);
    expect(asked).toEqual([0, 1, 2]);
  });

  it('a page that only overlaps the index goes through, and a card on two pages counts once', async () => {
    const pages = [[card('a'), { _id: 'k1' }], [{ _id: 'k1' }, card('a'), card('b')]];
    const { api } = pagedApi((n) => pages[n] ?? []);
    const index = await loadKeyIndex(api, 'Name', ['Name']);
    expect(index.cards).toBe(3);
  });
});

describe('--match-on: a key many cards share', () => {
  it('200,000 cards under one key: read in linear time, counted, five ids kept; a repeated page of them still stops', async () => {
    const page = (n: number) => Array.from({ length: 1000 }, (_, i) => ({ _id: `c${n * 1000 + i}`, Name: 'SAME' }));
    const { api } = pagedApi((n) => (n < 200 ? page(n) : []));
    const index = await loadKeyIndex(api, 'Name', ['Name']);
    expect(index.cards).toBe(200_000);
    expect(index.ambiguous.get('SAME')).toEqual({ ids: ['c0', 'c1', 'c2', 'c3', 'c4'], count: 200_000 });
    const again = pagedApi((n) => (n < 3 ? page(n) : page(1)));
    await expect(loadKeyIndex(again.api, 'Name', ['Name'])).rejects.toThrow(/^Page 3 of .* repeats 1000 cards already seen/);
  });
});

describe('SeenIds', () => {
  it('tells seen from new across growth, for 200,000 ids', () => {
    const seen = new SeenIds();
    let first = 0;
    for (let i = 0; i < 200_000; i++) if (!seen.add(`id${i}`)) first++;
    expect([first, seen.size]).toEqual([200_000, 200_000]);
    let again = 0;
    for (let i = 0; i < 200_000; i += 7) if (seen.add(`id${i}`)) again++;
    expect(again).toBe(Math.ceil(200_000 / 7));
    let fresh = 0;
    for (let i = 200_000; i < 400_000; i++) if (!seen.add(`id${i}`)) fresh++;
    expect(fresh).toBe(200_000);
    expect(seen.has('')).toBe(false);
    expect(seen.add('')).toBe(false);
    expect(seen.add('')).toBe(true);
    expect(seen.has('id399999')).toBe(true);
  });
});
