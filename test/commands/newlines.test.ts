// One way to show a line break in a value on a terminal: `\n`, the same in `card list` and `card get`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCardGet } from '../../src/commands/card/get.js';
import { runCardList } from '../../src/commands/card/list.js';
import { tempDir } from '../helpers/cli.js';
import { BOARD_ID, type RunningEmulator, startTestEmulator, TOKEN } from '../helpers/emulator.js';
import { testContext } from '../io/buffers.js';

let emu: RunningEmulator;
let id: string;
const configDir = tempDir();
const io = (tty: boolean) => testContext({ tty, env: { CARDBOARD_BASE_URL: emu.url, CARDBOARD_BOARD: BOARD_ID, CARDBOARD_TOKEN: TOKEN, CARDBOARD_CONFIG_DIR: configDir } });

beforeAll(async () => {
  emu = await startTestEmulator();
  const r = await fetch(`${emu.url}/api/aptlet/${BOARD_ID}`, {
    method: 'POST',
    headers: { 'x-token': TOKEN, 'content-type': 'application/json' },
    body: JSON.stringify({ Name: 'first line\nsecond line', Status: 'a\r\nb' }),
  });
  id = ((await r.json()) as { _id: string })._id;
});
afterAll(async () => {
  await emu.close();
});

describe('a value with line breaks on a terminal', () => {
  it('card get and card list show it the same way, `\\n` on one line', async () => {
    const get = io(true);
    await runCardGet(get.ctx, { cardId: id });
    const list = io(true);
    await runCardList(list.ctx, { page: 0, all: false });
    const shown = 'first line\\nsecond line';
    expect(get.stdout.text).toMatch(new RegExp(`^Name +${shown.replace(/\\/g, '\\\\')}$`, 'm'));
    expect(get.stdout.text).toMatch(/^Status +a\\r\\nb$/m);
    expect(get.stdout.text).not.toContain('\nsecond line');
    expect(list.stdout.text.trimEnd().split('\n')[1]).toMatch(new RegExp(`^${id} +${shown.replace(/\\/g, '\\\\')} +a\\\\r\\\\nb$`));
  });
  it('piped, the data keeps its exact escapes (TSV of --format table) or the value itself (--json, ndjson)', async () => {
    const piped = io(false);
    await runCardGet(piped.ctx, { cardId: id, format: 'table' });
    expect(piped.stdout.text).toContain('Name\tfirst line\\nsecond line\n');
    const json = io(false);
    await runCardGet(json.ctx, { cardId: id, format: 'json' });
    expect(JSON.parse(json.stdout.text)).toMatchObject({ Name: 'first line\nsecond line', Status: 'a\r\nb' });
    const nd = io(false);
    await runCardGet(nd.ctx, { cardId: id });
    expect(nd.stdout.text.split('\n')).toHaveLength(2);
    expect(JSON.parse(nd.stdout.text)).toMatchObject({ Name: 'first line\nsecond line', Status: 'a\r\nb' });
  });
});
