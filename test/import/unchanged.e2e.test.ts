// With --match-on, a re-run sends only the rows that differ from their card.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { cli } from '../commands/helpers.js';
import { call } from '../emulator/http.js';
import { BOARD_ID, TOKEN } from '../helpers/emulator.js';
import { posts, start, writeCards } from './helpers.js';

/** The board's cards as Name → the file's four fields. */
function boardRows(cards: Record<string, unknown>[]): Map<string, string> {
  return new Map(cards.map((c) => [String(c.Name), [c.Status, c.Owner, c.Priority].map(String).join('|')]));
}

/** The file's rows in the same shape. */
function fileRows(file: string): Map<string, string> {
  const lines = readFileSync(file, 'utf8').trim().split('\n').slice(1);
  return new Map(lines.map((l) => {
    const m = /^([^,]+),([^,]+),"([^"]+)",(.+)$/.exec(l)!;
    return [m[1]!, [m[2], m[3], m[4]].join('|')];
  }));
}

describe('cardboard import --match-on: unchanged rows', () => {
  it('restores exactly the drifted cards, then sends nothing', async () => {
    const e = await start();
    const file = writeCards(30, 'u');
    const args = ['import', file, '--match-on', 'Name', '--json', '--restart'];
    const first = await cli(e, args);
    expect(JSON.parse(first.stdout)).toMatchObject({ created: 30, unchanged: 0 });

    const cards = e.state()[BOARD_ID]!.cards;
    for (const name of ['u-3', 'u-17', 'u-30']) {
      const card = cards.find((c) => c.Name === name)!;
      const r = await call(e, 'POST', `/api/aptlet/${BOARD_ID}`, { token: TOKEN, body: { _id: card._id, Status: 'Done' } });
      expect(r.status).toBe(200);
    }
    expect(boardRows(e.state()[BOARD_ID]!.cards)).not.toEqual(fileRows(file));

    e.resetRequests();
    const second = await cli(e, args);
    expect(second.code).toBe(0);
    expect(JSON.parse(second.stdout)).toMatchObject({ rows: 30, created: 0, updated: 3, unchanged: 27 });
    expect(posts(e)).toBe(3);
    expect(e.state()[BOARD_ID]!.cards).toHaveLength(30);
    expect(boardRows(e.state()[BOARD_ID]!.cards)).toEqual(fileRows(file));

    e.resetRequests();
    const third = await cli(e, args);
    expect(JSON.parse(third.stdout)).toMatchObject({ rows: 30, created: 0, updated: 0, unchanged: 30 });
    const requests = (await call(e, 'GET', '/__emulator/requests')).json as { method: string }[];
    expect(requests.filter((r) => r.method === 'POST')).toHaveLength(0);

    // --force sends every row anyway.
    const forced = await cli(e, [...args, '--force']);
    expect(JSON.parse(forced.stdout)).toMatchObject({ updated: 30, unchanged: 0 });
  });

  it('--dry-run counts unchanged rows and shows what the first updates change', async () => {
    const e = await start();
    const file = writeCards(5, 'd');
    await cli(e, ['import', file, '--match-on', 'Name']);
    const card = e.state()[BOARD_ID]!.cards.find((c) => c.Name === 'd-4')!;
    await call(e, 'POST', `/api/aptlet/${BOARD_ID}`, { token: TOKEN, body: { _id: card._id, Status: 'Done' } });
    e.resetRequests();
    const r = await cli(e, ['import', file, '--match-on', 'Name', '--dry-run']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('  unchanged 4 (equal to their card: not sent)');
    expect(r.stdout).toContain('  line 5: Status: Done → Open');
    const json = await cli(e, ['import', file, '--match-on', 'Name', '--dry-run', '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({ dryRun: true, created: 0, updated: 1, unchanged: 4, changes: [{ line: 5, id: card._id, changes: [{ field: 'Status', from: 'Done', to: 'Open' }] }] });
    expect(posts(e)).toBe(0);
  });
});
