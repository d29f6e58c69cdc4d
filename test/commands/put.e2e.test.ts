import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/cli.js';
import {
  BOARD_ID,
  CREATE_FIELDS_BOARD_ID,
  CREATE_NEW_BOARD_ID,
  type RunningEmulator,
  startTestEmulator,
} from '../helpers/emulator.js';
import { cli } from './helpers.js';

let emu: RunningEmulator;
beforeEach(async () => {
  emu = await startTestEmulator();
});
afterEach(async () => {
  await emu.close();
});

const cards = (board = BOARD_ID) => emu.state()[board]!.cards;
const posts = () => emu.requests().filter((r) => r.method === 'POST');

describe('card put', () => {
  it('creates a card and prints its _id alone; get and list return it', async () => {
    const put = await cli(emu, ['card', 'put', 'Name=Fix login', 'Status=Open']);
    expect(put.code, put.stderr).toBe(0);
    const id = cards()[0]!._id;
    expect(put.stdout).toBe(`${id}\n`);
    expect(put.stderr).toBe('');

    const get = await cli(emu, ['card', 'get', id, '--json']);
    expect(get.code, get.stderr).toBe(0);
    expect(JSON.parse(get.stdout)).toEqual({ _id: id, Name: 'Fix login', Status: 'Open' });

    const piped = await cli(emu, ['card', 'get', id]);
    expect(piped.stdout).toBe(`${JSON.stringify({ _id: id, Name: 'Fix login', Status: 'Open' })}\n`);

    const list = await cli(emu, ['card', 'list']);
    expect(list.stdout).toBe(`${JSON.stringify({ _id: id, Name: 'Fix login', Status: 'Open' })}\n`);
  });

  it('sends Field:=json values typed', async () => {
    const r = await cli(emu, ['card', 'put', 'Name:=["a","b"]', 'Priority:=3', 'Status:=true', 'Owner:={"id":7,"n":null}', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const stored = cards()[0]!;
    expect(stored).toMatchObject({ Name: ['a', 'b'], Priority: 3, Status: true, Owner: { id: 7, n: null } });
    expect(JSON.parse(r.stdout)).toEqual(stored);
  });

  it('keeps the text after the first = (or :=) whole, names with spaces included', async () => {
    const r = await cli(emu, ['card', 'put', 'Name=a=b:=c', 'Status:="x=y"']);
    expect(r.code, r.stderr).toBe(0);
    expect(cards()[0]).toMatchObject({ Name: 'a=b:=c', Status: 'x=y' });
  });

  it('refuses a mis-cased key with exit 2, names the field, and sends nothing', async () => {
    const r = await cli(emu, ['card', 'put', 'Name=x', 'status=Open']);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain("'status'");
    expect(r.stderr).toContain("did you mean 'Status'");
    expect(posts()).toEqual([]);
    expect(cards()).toEqual([]);
  });

  it('refuses bad JSON after := naming the field, before any request', async () => {
    const r = await cli(emu, ['card', 'put', 'Priority:=three']);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain("field 'Priority'");
    expect(emu.requests()).toEqual([]);
  });

  it('refuses a put with no fields', async () => {
    const r = await cli(emu, ['card', 'put', '--id', 'c1']);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain('no field values');
    expect(emu.requests()).toEqual([]);
  });

  it('--allow-unknown sends the key and warns; with Create Fields on it becomes a field', async () => {
    const r = await cli(emu, ['card', 'put', 'Name=x', 'Colour=red', '--allow-unknown'], { board: CREATE_FIELDS_BOARD_ID });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain("'Colour' is not a field of the board");
    expect(r.stderr).toContain('Create Fields');
    expect(posts()[0]!.body).toEqual({ Name: 'x', Colour: 'red' });
    expect(emu.state()[CREATE_FIELDS_BOARD_ID]!.fields.map((f) => f.name)).toContain('Colour');
  });

  it('--allow-unknown on a board with Create Fields off: the service drops the key', async () => {
    const r = await cli(emu, ['card', 'put', 'Name=x', 'Colour=red', '--allow-unknown']);
    expect(r.code, r.stderr).toBe(0);
    expect(cards()[0]).toEqual({ _id: r.stdout.trim(), Name: 'x' });
  });

  it('--id updates on an Update-if-exists board', async () => {
    const first = await cli(emu, ['card', 'put', 'Name=x', 'Status=Open']);
    const id = first.stdout.trim();
    const r = await cli(emu, ['card', 'put', '--id', id, 'Status=Done']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(`${id}\n`);
    expect(r.stderr).toBe('');
    expect(cards()).toEqual([{ _id: id, Name: 'x', Status: 'Done' }]);
  });

  it('a new card instead of the update (Always Create New): the new id printed, a warning, exit 5 (built binary)', async () => {
    const first = await cli(emu, ['card', 'put', 'Name=x'], { board: CREATE_NEW_BOARD_ID });
    expect(first.code, first.stderr).toBe(0);
    const id = first.stdout.trim();
    const r = await cli(emu, ['card', 'put', '--id', id, 'Status=Done'], { board: CREATE_NEW_BOARD_ID, spawn: true });
    expect(r.code, r.stderr).toBe(5);
    const newId = r.stdout.trim();
    expect(newId).not.toBe(id);
    expect(cards(CREATE_NEW_BOARD_ID).map((c) => c._id)).toEqual([id, newId]);
    // The card asked for exists, so the mode is named as the likely cause.
    expect(r.stderr).toBe(
      `warning: the board created a new card (${newId}) instead of updating ${id}: that card exists, so the board's Update Mode is most likely "Always Create New".\n` +
        'hint: To update cards by _id, set the board\'s Update Mode to "Update if exists" (Card Sources). Exit code 5: done, but not as asked.\n',
    );
    const json = await cli(emu, ['card', 'put', '--id', id, 'Status=Done', '--json'], { board: CREATE_NEW_BOARD_ID });
    expect(json.code).toBe(5);
    expect(JSON.parse(json.stdout)).toEqual(cards(CREATE_NEW_BOARD_ID).at(-1));
  });

  it('the normal update exits 0 with no warning; an id no card has (spec 4.3 rule 4) exits 5 and says so', async () => {
    const first = await cli(emu, ['card', 'put', 'Name=x']);
    const id = first.stdout.trim();
    const update = await cli(emu, ['card', 'put', '--id', id, 'Status=Done'], { spawn: true });
    expect([update.code, update.stdout, update.stderr]).toEqual([0, `${id}\n`, '']);
    const missing = await cli(emu, ['card', 'put', '--id', 'no-such-card', 'Name=y']);
    expect(missing.code).toBe(5);
    expect(missing.stdout).toBe(`${cards().at(-1)!._id}\n`);
    expect(missing.stderr).toContain('instead of updating no-such-card: no card has that id');
  });

  it('--data from a file and from stdin merges under the pairs', async () => {
    const dir = tempDir();
    const file = join(dir, 'card.json');
    writeFileSync(file, JSON.stringify({ Name: 'from file', Status: 'Open', Owner: 'ann' }));
    const r = await cli(emu, ['card', 'put', '--data', `@${file}`, 'Status=Done']);
    expect(r.code, r.stderr).toBe(0);
    expect(cards()[0]).toMatchObject({ Name: 'from file', Status: 'Done', Owner: 'ann' });

    const s = await cli(emu, ['card', 'put', '--data', '-'], { input: '{"Name":"from stdin","Priority":2}' });
    expect(s.code, s.stderr).toBe(0);
    expect(cards()[1]).toMatchObject({ Name: 'from stdin', Priority: 2 });
  });

  it('checks keys of --data too, and rejects data that is not an object', async () => {
    const r = await cli(emu, ['card', 'put', '--data', '{"name":"x"}']);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain("did you mean 'Name'");
    const arr = await cli(emu, ['card', 'put', '--data', '[1]']);
    expect(arr.code, arr.stderr).toBe(2);
    expect(posts()).toEqual([]);
  });
});
