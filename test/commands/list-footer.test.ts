// `card list` on a terminal ends with the next step when there may be more pages. Spec 4.5 has no
// total and no page size: only an empty next page says a page was the last, so the footer reads that page.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CardListOptions, pageFooter, runCardList } from '../../src/commands/card/list.js';
import { tempDir } from '../helpers/cli.js';
import { BOARD_ID, type RunningEmulator, startTestEmulator, TOKEN } from '../helpers/emulator.js';
import { testContext } from '../io/buffers.js';

describe('pageFooter', () => {
  it('names the next page when the next one has cards', () => {
    expect(pageFooter(0, 20, 20, 'more')).toBe('page 0 of at least 2: --page 1 or --all');
    expect(pageFooter(4, 20, 20, 'more')).toBe('page 4 of at least 6: --page 5 or --all');
  });
  it('nothing for a board of one page; the last page said as such', () => {
    expect(pageFooter(0, 3, 3, 'none')).toBeUndefined();
    expect(pageFooter(2, 3, 3, 'none')).toBe('page 2 of 3, the last');
  });
  it('unknown (the next page could not be read): may be more', () => {
    expect(pageFooter(0, 20, 20, 'unknown')).toBe('page 0; there may be more: --page 1 or --all');
  });
  it('a page past the end, and a page cut by --limit', () => {
    expect(pageFooter(3, 0, 0, 'none')).toBe('page 3 is empty: the board has fewer pages (--page 0 is the first), or use --all');
    expect(pageFooter(0, 0, 0, 'none')).toBeUndefined();
    expect(pageFooter(0, 5, 20, 'more')).toBe('first 5 of the 20 cards of page 0 of at least 2: --page 1 or --all (a higher --limit for the rest)');
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
    expect(lastLine(r.out)).toBe('page 0 of at least 2: --page 1 or --all');
    expect(r.out.trimEnd().split('\n').at(-2)).toMatch(/^└/);
    expect(r.pages.sort()).toEqual([0, 1]);
  });
  it('the last page: said so; a page past the end: said so', async () => {
    expect(lastLine((await list({ page: 2 })).out)).toBe('page 2 of 3, the last');
    expect(lastLine((await list({ page: 1 })).out)).toBe('page 1 of at least 3: --page 2 or --all');
    expect(lastLine((await list({ page: 7 })).out)).toBe('page 7 is empty: the board has fewer pages (--page 0 is the first), or use --all');
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
      expect(lastLine(r.out)).toMatch(/^└/);
    } finally {
      emu = saved;
    }
  });
});
