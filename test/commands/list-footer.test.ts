// `card list` on a terminal ends with the next step when there may be more pages. Spec 4.5 has no total and
// no page size: only an empty next page says a page was the last, so the footer reads that page. Pages are
// named as typed for --page (zero-based), never "page 2 of 3".
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CardListOptions, runCardList } from '../../src/commands/card/list.js';
import { pageFooter, type PagesShown } from '../../src/commands/card/page-footer.js';
import { tempDir } from '../helpers/cli.js';
import { BOARD_ID, type RunningEmulator, startTestEmulator, TOKEN } from '../helpers/emulator.js';
import { testContext } from '../io/buffers.js';

/** One whole page `first` of 20 cards read. */
const page = (first: number, more: Partial<PagesShown> = {}): PagesShown => ({ first, read: 1, shown: 20, shownOfLast: 20, lastLength: 20, ...more });

describe('pageFooter', () => {
  it('names the next page when the next one has cards', () => {
    expect(pageFooter(page(0), 'more')).toBe('more on page 1: --page 1, or --all for every page');
    expect(pageFooter(page(4), 'more')).toBe('more on page 5: --page 5, or --all for every page');
  });
  it('nothing for a board of one page; the last page said as such, with no count beside it', () => {
    expect(pageFooter(page(0), 'none')).toBeUndefined();
    expect(pageFooter(page(2), 'none')).toBe('page 2 is the last page');
  });
  it('unknown (the next page could not be read): may be more', () => {
    expect(pageFooter(page(0), 'unknown')).toBe('there may be more on page 1: --page 1, or --all for every page');
  });
  it('--limit: reached inside a page, or at its end; pages read from --page on', () => {
    expect(pageFooter(page(0, { shown: 5, shownOfLast: 5, limit: 5 }), 'none')).toBe('--limit 5 reached part way through page 0; a higher --limit shows the rest');
    expect(pageFooter(page(3, { read: 2, shown: 40, limit: 40 }), 'none')).toBe('--limit 40 reached at the end of page 4; there may be more: --page 5, or a higher --limit');
    // The board ended before the limit: from page 0 that is the whole board.
    expect(pageFooter(page(0, { read: 3, shown: 45, shownOfLast: 5, lastLength: 5, limit: 50 }), 'none')).toBeUndefined();
    expect(pageFooter(page(1, { read: 2, shown: 25, shownOfLast: 5, lastLength: 5, limit: 50 }), 'none')).toBe('page 2 is the last page');
  });
  it('never says "of"', () => {
    for (const next of ['more', 'none', 'unknown'] as const) for (const p of [page(0), page(3), page(3, { limit: 3, shown: 3, shownOfLast: 3 })]) expect(pageFooter(p, next) ?? '').not.toMatch(/\bof\b/);
  });
});

let emu: RunningEmulator;
const configDir = tempDir();

async function list(opts: Partial<CardListOptions> & { tty?: boolean }) {
  const t = testContext({ tty: opts.tty ?? true, env: { CARDBOARD_BASE_URL: emu.url, CARDBOARD_BOARD: BOARD_ID, CARDBOARD_TOKEN: TOKEN, CARDBOARD_CONFIG_DIR: configDir } });
  emu.resetRequests();
  await runCardList(t.ctx, { page: 0, all: false, ...opts });
  const pages = emu.requests().filter((r) => r.path.includes('?page=')).map((r) => Number(r.path.split('?page=')[1]));
  return { out: t.stdout.text, err: t.stderr.text, pages };
}

async function put(n: number) {
  for (let i = 0; i < n; i++) {
    const r = await fetch(`${emu.url}/api/aptlet/${BOARD_ID}`, { method: 'POST', headers: { 'x-token': TOKEN, 'content-type': 'application/json' }, body: JSON.stringify({ Name: `card ${i}` }) });
    expect(r.status).toBe(200);
  }
}

beforeAll(async () => {
  // Three pages of 2, 2 and 1 cards.
  emu = await startTestEmulator({ pageSize: 2 });
  await put(5);
});
afterAll(async () => {
  await emu.close();
});

const lastLine = (text: string) => text.trimEnd().split('\n').at(-1);

describe('card list on a terminal', () => {
  it('page 0 of a longer board: the next step after the table, the next page read at the same time', async () => {
    const r = await list({});
    expect(lastLine(r.out)).toBe('more on page 1: --page 1, or --all for every page');
    expect(r.out.trimEnd().split('\n').at(-2)).toMatch(/^\S+ +card 1$/);
    expect(r.pages.sort()).toEqual([0, 1]);
  });
  it('the last page: said so; a page past the end: no table, said on stderr', async () => {
    expect(lastLine((await list({ page: 2 })).out)).toBe('page 2 is the last page');
    expect(lastLine((await list({ page: 1 })).out)).toBe('more on page 2: --page 2, or --all for every page');
    const past = await list({ page: 7 });
    expect(past.out).toBe('');
    expect(past.err).toBe('no cards on page 7\n');
  });
  it('--limit reads on from --page until it has enough, and says where it stopped', async () => {
    const three = await list({ page: 1, limit: 3 });
    expect(three.out.trimEnd().split('\n').slice(1, -1).map((l) => l.split(/ +/).slice(1).join(' '))).toEqual(['card 2', 'card 3', 'card 4']);
    // The third card is the last of page 2: no further page is read, so whether there is more is not known.
    expect(lastLine(three.out)).toBe('--limit 3 reached at the end of page 2; there may be more: --page 3, or a higher --limit');
    expect(three.pages).toEqual([1, 2]);
    const four = await list({ page: 1, limit: 4 });
    expect(four.out.trimEnd().split('\n')).toHaveLength(1 + 3 + 1);
    expect(lastLine(four.out)).toBe('page 2 is the last page');
    expect(four.pages).toEqual([1, 2, 3]);
    const cut = await list({ limit: 3 });
    expect(lastLine(cut.out)).toBe('--limit 3 reached part way through page 1; a higher --limit shows the rest');
    expect(cut.pages).toEqual([0, 1]);
  });
  it('never piped, in --json/--format output, or with --all (and no extra request then)', async () => {
    for (const opts of [{ tty: false }, { format: 'json' as const }, { format: 'csv' as const }, { tty: false, format: 'table' as const }]) {
      const r = await list(opts);
      expect(r.out).not.toContain('--page');
      expect(r.pages).toEqual([0]);
    }
    const all = await list({ all: true });
    expect(all.out).not.toContain('--page');
  });
});

describe('a full page is not taken for "more" (spec 4.5: the page size is not fixed)', () => {
  let two: RunningEmulator;
  beforeAll(async () => {
    two = await startTestEmulator({ pageSize: 2 });
    const saved = emu;
    emu = two;
    await put(2);
    emu = saved;
  });
  afterAll(async () => {
    await two.close();
  });
  it('exactly one full page: no footer, since page 1 is empty', async () => {
    const saved = emu;
    emu = two;
    try {
      const r = await list({});
      expect(r.out).toContain('card 1');
      expect(r.out).not.toContain('--page');
      expect(lastLine(r.out)).toMatch(/^\S+ +card 1$/);
    } finally {
      emu = saved;
    }
  });
});

describe('an empty board on a terminal', () => {
  let empty: RunningEmulator;
  beforeAll(async () => {
    empty = await startTestEmulator({ pageSize: 2 });
  });
  afterAll(async () => {
    await empty.close();
  });
  it('no table: `no cards` (--all) or `no cards on page 0` on stderr, stdout empty', async () => {
    const saved = emu;
    emu = empty;
    try {
      const all = await list({ all: true });
      expect([all.out, all.err]).toEqual(['', 'no cards\n']);
      const first = await list({});
      expect([first.out, first.err]).toEqual(['', 'no cards on page 0\n']);
    } finally {
      emu = saved;
    }
  });
});
