// JSON in, types kept. NDJSON and JSON arrays keep every value's type; --type types CSV cells;
// `card list --format ndjson | import -` copies a board exactly, and a second copy with --match-on changes nothing.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cli } from '../commands/helpers.js';
import { tempDir } from '../helpers/cli.js';
import { type RunningEmulator, startTestEmulator } from '../helpers/emulator.js';

const FIELDS = ['Name', 'Points', 'Done', 'Owner', 'Tags', 'Code'];
const board = (token: string) => ({ token, fields: FIELDS, updateMode: 'Update if exists' as const, createFields: false, webhookUrl: null, signingKey: `sk-${token}` });
const BOARDS = { src: board('tok-src-123456'), dst: board('tok-dst-123456') };
const CARDS = [
  { Name: 'a', Points: 3, Done: true, Owner: { name: 'Ada', id: 7 }, Tags: ['x', 2, null], Code: '007' },
  { Name: 'b', Points: 2.5, Done: false, Owner: null, Tags: [], Code: '' },
  { Name: 'c', Points: 0, Code: 'line\nbreak "quoted", comma' },
];

let emu: RunningEmulator | undefined;
afterEach(async () => {
  await emu?.close();
  emu = undefined;
});

const withoutIds = (e: RunningEmulator, id: string) =>
  e.state()[id]!.cards.map(({ _id, ...rest }) => rest).sort((x, y) => String(x.Name).localeCompare(String(y.Name)));

async function seeded(): Promise<RunningEmulator> {
  const e = await startTestEmulator({ boards: BOARDS });
  for (const card of CARDS) {
    const r = await fetch(`${e.url}/api/aptlet/src`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-token': BOARDS.src.token }, body: JSON.stringify(card) });
    expect(r.ok).toBe(true);
  }
  return e;
}

describe('import: JSON input keeps types', () => {
  it('copies a board through card list --format ndjson | import -, identical in values and types; twice changes nothing', async () => {
    emu = await seeded();
    const e = emu;
    const list = await cli(e, ['card', 'list', '--all', '--format', 'ndjson'], { board: 'src' });
    expect(list.code).toBe(0);
    const copy = ['import', '-', '--input-format', 'ndjson', '--skip-column', '_id', '--match-on', 'Name', '--json'];
    const first = await cli(e, copy, { board: 'dst', input: list.stdout });
    expect(first.stderr).not.toMatch(/error/);
    expect(JSON.parse(first.stdout)).toMatchObject({ rows: 3, created: 3, rejected: 0 });
    expect(withoutIds(e, 'dst')).toEqual(withoutIds(e, 'src'));
    expect(withoutIds(e, 'dst')[0]).toEqual(CARDS[0]);

    e.resetRequests();
    const second = await cli(e, copy, { board: 'dst', input: list.stdout });
    expect(JSON.parse(second.stdout)).toMatchObject({ rows: 3, created: 0, updated: 0, unchanged: 3 });
    expect(e.requests().filter((r) => r.method === 'POST')).toEqual([]);
  });

  it('reads a .json array and an .ndjson file by extension; a bad line is one rejected row and reading goes on', async () => {
    emu = await seeded();
    const dir = tempDir();
    const array = join(dir, 'cards.json');
    writeFileSync(array, JSON.stringify(CARDS));
    const a = await cli(emu, ['import', array, '--json'], { board: 'dst' });
    expect(JSON.parse(a.stdout)).toMatchObject({ rows: 3, created: 3 });
    expect(withoutIds(emu, 'dst')).toEqual(withoutIds(emu, 'src'));

    const lines = join(dir, 'cards.ndjson');
    const rejects = join(dir, 'rejects.ndjson');
    writeFileSync(lines, `${JSON.stringify({ Name: 'd', Points: 1 })}\n{not json\n[1,2]\n${JSON.stringify({ Name: 'e', Done: true })}\n`);
    const n = await cli(emu, ['import', lines, '--json', '--rejects', rejects], { board: 'dst' });
    expect(n.code).toBe(3);
    expect(JSON.parse(n.stdout)).toMatchObject({ rows: 4, created: 2, rejected: 2 });
    expect(emu.state().dst!.cards.find((c) => c.Name === 'e')?.Done).toBe(true);
  });

  it('--type converts CSV cells; a cell that does not convert rejects its row; --type is refused for JSON input', async () => {
    emu = await startTestEmulator({ boards: BOARDS });
    const dir = tempDir();
    const file = join(dir, 'typed.csv');
    writeFileSync(file, 'Name,Points,Done,Owner,Code\nx,3,true,"{""name"":""Ada""}",007\ny,three,false,null,8\n');
    const r = await cli(emu, ['import', file, '--type', 'Points=number', '--type', 'Done=boolean', '--type', 'Owner=json', '--json'], { board: 'dst' });
    expect(r.code).toBe(3);
    expect(JSON.parse(r.stdout)).toMatchObject({ created: 1, rejected: 1 });
    expect(withoutIds(emu, 'dst')).toEqual([{ Name: 'x', Points: 3, Done: true, Owner: { name: 'Ada' }, Code: '007' }]);
    const refused = await cli(emu, ['import', file, '--type', 'Nope=number'], { board: 'dst' });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("--type Nope=number: no column is sent as the field 'Nope'");
    const json = join(dir, 'x.ndjson');
    writeFileSync(json, '{"Name":"z"}\n');
    const noType = await cli(emu, ['import', json, '--type', 'Points=number'], { board: 'dst' });
    expect(noType.code).toBe(2);
    expect(noType.stderr).toContain('--type applies to CSV input');
  });
});
