import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCardGet } from '../../src/commands/card/get.js';
import { runCardList } from '../../src/commands/card/list.js';
import { runCardPut } from '../../src/commands/card/put.js';
import { runComment } from '../../src/commands/comment/comment.js';
import { runSchema } from '../../src/commands/schema/schema.js';
import { main } from '../../src/main.js';
import { tempDir } from '../helpers/cli.js';
import { BOARD_ID, type RunningEmulator, startTestEmulator, TOKEN } from '../helpers/emulator.js';
import { testContext } from '../io/buffers.js';

// In-process twins of the end-to-end tests: the run functions with a fake TTY stdout (columns 100)
// and a piped one, so the table rendering is asserted without a pseudo-terminal.
let emu: RunningEmulator;
let id: string;
const configDir = tempDir();

function io(tty: boolean, stdin?: string) {
  const t = testContext({
    tty,
    stdin,
    env: { CARDBOARD_BASE_URL: emu.url, CARDBOARD_BOARD: BOARD_ID, CARDBOARD_TOKEN: TOKEN, CARDBOARD_CONFIG_DIR: configDir },
  });
  return t;
}

beforeAll(async () => {
  emu = await startTestEmulator({ pageSize: 2 });
  const { ctx, stdout } = io(false);
  await runCardPut(ctx, { fields: { Name: 'Fix login', Status: 'Open', Priority: 3 }, allowUnknown: false, json: false });
  id = stdout.text.trim();
  for (const name of ['Second', 'Third']) {
    await runCardPut(io(false).ctx, { fields: { Name: name }, allowUnknown: false, json: false });
  }
});
afterAll(async () => {
  await emu.close();
});

const lines = (text: string) => text.trimEnd().split('\n');

describe('schema', () => {
  it('TTY: a borderless table of name and uuid, no escape codes under NO_COLOR', async () => {
    const { ctx, stdout } = io(true);
    await runSchema(ctx, { json: false, refresh: false });
    const out = lines(stdout.text);
    expect(out[0]).toMatch(/^name {2,}uuid$/);
    const fields = emu.state()[BOARD_ID]!.fields;
    expect(out).toHaveLength(1 + fields.length);
    for (const f of fields) expect(stdout.text).toMatch(new RegExp(`^${f.name} {2,}${f.uuid}$`, 'm'));
    expect(stdout.text).not.toContain('\u001b[');
    for (const line of out) expect(line.length).toBeLessThanOrEqual(100);
  });
  it('piped twin: tab-separated', async () => {
    const { ctx, stdout } = io(false);
    await runSchema(ctx, { json: false, refresh: false });
    expect(lines(stdout.text)[0]).toBe('name\tuuid');
  });
});

describe('card get', () => {
  it('TTY: a two-column field/value table', async () => {
    const { ctx, stdout } = io(true);
    await runCardGet(ctx, { cardId: id });
    const text = stdout.text;
    expect(text).toBe(`field     value\n_id       ${id}\nName      Fix login\nStatus    Open\nPriority  3\n`);
  });
  it('piped twin: the card as one line of JSON; --format table: field<TAB>value', async () => {
    const { ctx, stdout } = io(false);
    await runCardGet(ctx, { cardId: id });
    expect(stdout.text).toBe(`${JSON.stringify({ _id: id, Name: 'Fix login', Status: 'Open', Priority: 3 })}\n`);
    const table = io(false);
    await runCardGet(table.ctx, { cardId: id, format: 'table' });
    expect(table.stdout.text).toBe(`_id\t${id}\nName\tFix login\nStatus\tOpen\nPriority\t3\n`);
  });
});

describe('card list', () => {
  it('TTY default: one table over every page with --all, columns _id then schema order', async () => {
    const { ctx, stdout } = io(true);
    await runCardList(ctx, { page: 0, all: true });
    const text = stdout.text;
    // One table: a single header row, then a line per card.
    expect(lines(text)).toHaveLength(4);
    expect(lines(text)[0]).toMatch(/^_id +Name +Status +Owner +Priority$/);
    expect(text).toMatch(/ {2}Fix login +Open +3$/m);
    expect(lines(text)[3]).toMatch(/^\S+ +Third$/);
  });
  it('piped twin: ndjson', async () => {
    const { ctx, stdout } = io(false);
    await runCardList(ctx, { page: 0, all: true });
    expect(lines(stdout.text).map((l) => JSON.parse(l).Name)).toEqual(['Fix login', 'Second', 'Third']);
  });
  it('stops quietly when the reader goes away (EPIPE), without fetching further pages', async () => {
    const { parts, stdout, stderr } = io(false);
    emu.resetRequests();
    const write = stdout.write.bind(stdout);
    let calls = 0;
    stdout.write = ((chunk: string) => {
      // The first page is written as one chunk: the reader goes away on it.
      if (++calls === 1) {
        stdout.emit('error', Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
        return true;
      }
      return write(chunk);
    }) as typeof stdout.write;
    // The closed pipe is handled where the run is driven (main.ts, src/io/write.ts): exit 0, nothing said.
    expect(await main(['card', 'list', '--all'], parts)).toBe(0);
    expect(stderr.text).toBe('');
    expect(emu.requests().filter((r) => r.path.includes('?page='))).toHaveLength(1);
  });
});

describe('comment', () => {
  it('reads stdin in-process too', async () => {
    const { ctx, stdout } = io(false, 'from stdin\n');
    await runComment(ctx, { cardId: id, stdin: true, json: false });
    const stored = emu.state()[BOARD_ID]!.comments[id]!.at(-1)!;
    expect(stored.content).toBe('from stdin');
    expect(stdout.text).toBe(`${stored.id}\n`);
  });
});
