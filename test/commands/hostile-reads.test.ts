// Listings and board reads against a hostile service end, with
// a clear error naming the page, and a terminal table of --all holds a bounded number of rows.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_TABLE_ROWS, runCardList } from '../../src/commands/card/list.js';
import { PartialError } from '../../src/errors.js';
import { runMain, tempDir } from '../helpers/cli.js';
import { type HostileServer, hostileEnv, useHostileServer } from '../helpers/hostile-server.js';
import { testContext } from '../io/buffers.js';

const hostile = useHostileServer(afterEach);
const env = hostileEnv;
const pageReads = (s: HostileServer) => s.requests.filter((r) => r.method === 'GET' && /\?page=/.test(r.url)).length;
const posts = (s: HostileServer) => s.requests.filter((r) => r.method === 'POST').length;

function csv(text: string): string {
  const file = join(tempDir(), 'cards.csv');
  writeFileSync(file, text);
  return file;
}

describe('a server that repeats its page', () => {
  it('card list --all stops at page 1 with exit 1, after writing the cards of page 0', async () => {
    const s = await hostile('repeat-page');
    const r = await runMain(['card', 'list', '--all'], { env: env(s) });
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain(`Page 1 of ${s.url}/api/aptlet/${s.boardId} repeats 3 cards already seen on earlier pages; the listing stopped`);
    expect(r.stderr).not.toMatch(/This is a bug|\n\s+at /);
    expect(r.stdout.trim().split('\n')).toHaveLength(3);
    expect(pageReads(s)).toBe(2);
  });

  it('import --match-on stops reading the board at page 1; nothing is sent', async () => {
    const s = await hostile('repeat-page');
    const r = await runMain(['import', csv('Title,Status\nnew,Open\n'), '--match-on', 'Title'], { env: env(s) });
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain('Page 1 of');
    expect(r.stderr).toContain('repeats 3 cards already seen on earlier pages');
    expect(r.stderr).not.toMatch(/This is a bug|Map maximum size/);
    expect(pageReads(s)).toBe(2);
    expect(posts(s)).toBe(0);
  });
});

describe('a page holding null', () => {
  it('card list: exit 1 naming the page and the index, no stack trace', async () => {
    const s = await hostile('null-in-page');
    const r = await runMain(['card', 'list'], { env: env(s) });
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain(`answered page 0 of ${s.url}/api/aptlet/${s.boardId} with null at index 1, not a card with a string \`_id\``);
    expect(r.stderr).not.toMatch(/This is a bug|\n\s+at /);
  });

  it('import --match-on: the same error, nothing sent', async () => {
    const s = await hostile('null-in-page');
    const r = await runMain(['import', csv('Title,Status\nnew,Open\n'), '--match-on', 'Title'], { env: env(s) });
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain('with null at index 1');
    expect(posts(s)).toBe(0);
  });
});

describe('--match-on: a key several cards hold', () => {
  it('the row is rejected naming how many cards and the first five ids', async () => {
    const cards = Array.from({ length: 7 }, (_, i) => ({ _id: `dup${i}`, Title: 'same', Status: 'Open' }));
    const s = await hostile('plain', { cards });
    const rejects = join(tempDir(), 'rejects.csv');
    const r = await runMain(['import', csv('Title,Status\nsame,Done\n'), '--match-on', 'Title', '--rejects', rejects], { env: env(s) });
    expect(r.code, r.stderr).toBe(3);
    expect(readFileSync(rejects, 'utf8')).toContain("Title 'same' matches 7 cards (dup0, dup1, dup2, dup3, dup4, …); not sent");
    expect(posts(s)).toBe(0);
  });
});

describe('progress while the board is read for --match-on', () => {
  it('says on stderr how many pages and cards were read', async () => {
    const s = await hostile('plain');
    const r = await runMain(['import', csv('Title,Status\nt1,Open\nnew,Open\n'), '--match-on', 'Title'], { env: env(s) });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('Reading the board for --match-on Title…');
    expect(r.stderr).toContain('Read the board: 2 pages, 5 cards');
    expect(r.stdout).toBe('');
  });
});

describe('card list --all as a terminal table', () => {
  it(`holds at most ${MAX_TABLE_ROWS} rows against endless new ids: prints them, then exit 3 pointing to --format`, async () => {
    const s = await hostile('endless-ids', { pageSize: 500 });
    const { ctx, stdout } = testContext({ tty: true, env: { ...env(s), CARDBOARD_CONFIG_DIR: tempDir() } });
    const err = await runCardList(ctx, { page: 0, all: true }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PartialError);
    expect((err as PartialError).exitCode).toBe(3);
    expect((err as Error).message).toBe(`The terminal table stops at 2,000 cards, and the board has more; the first 2,000 are shown.`);
    expect((err as PartialError).hint).toContain('--format ndjson, csv or json');
    expect(stdout.text.match(/^endless\d+ /gm)).toHaveLength(MAX_TABLE_ROWS);
    // It stopped reading at the page that brought card 2,001.
    expect(pageReads(s)).toBe(MAX_TABLE_ROWS / 500 + 1);
  });

  it('piped, the same listing streams past the cap (it is only the terminal table that buffers)', async () => {
    const s = await hostile('endless-ids', { pageSize: 500 });
    const r = await runMain(['card', 'list', '--all', '--limit', '2600'], { env: env(s) });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim().split('\n')).toHaveLength(2600);
  });
});

describe('a 2xx create answer without `_id` (no-id)', () => {
  it('card put: exit 1 saying the card may have been stored, no crash', async () => {
    const s = await hostile('no-id');
    const r = await runMain(['card', 'put', 'Title=x'], { env: env(s) });
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain('with success but no card `_id`: the card may have been stored');
    expect(r.stderr).not.toMatch(/This is a bug|\n\s+at /);
    expect(s.requests.filter((q) => q.method === 'POST')).toHaveLength(1);
  });

  it('import: each row is uncertain (not re-sent), the run goes on, exit 3', async () => {
    const s = await hostile('no-id');
    const r = await runMain(['import', csv('Title,Status\na,Open\nb,Open\n')], { env: env(s) });
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toMatch(/uncertain\s+2/);
    expect(r.stderr).not.toMatch(/This is a bug|\n\s+at /);
    expect(s.requests.filter((q) => q.method === 'POST')).toHaveLength(2);
  });
});
