// `card list --mirror`: the answer from the board's mirror, with no request to the service, the same cards
// as the live listing for every --where, and one line on stderr saying how old the mirror is. The mirror is
// filled through the store itself, as a complete pull leaves it; on each engine.
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Card, Field } from '../../src/spec-types.js';
import { type CardListOptions, MAX_TABLE_ROWS, runCardList } from '../../src/commands/card/list.js';
import { PartialError } from '../../src/errors.js';
import { tempDir } from '../helpers/cli.js';
import { testContext } from '../io/buffers.js';
import { BOARD_ID, type RunningEmulator, startTestEmulator } from '../helpers/emulator.js';
import { absent, ENGINES } from '../helpers/engines.js';
import { emulatorBoard, emulatorSchema, fillMirror } from '../helpers/mirror.js';
import { cli, ndjson, putCards } from './helpers.js';

const ids = (stdout: string) => ndjson(stdout).map((c) => c._id);

describe.each(ENGINES)('card list --mirror ($name)', (engine) => {
  if (absent(engine)) return;

  let emu: RunningEmulator;
  const dir = tempDir();
  let location: string;
  let drop: () => Promise<void>;
  const env: Record<string, string> = {};

  /** Save the board's cards into the mirror at `path` in pages of two, as a pull would; `finish` false leaves the pull open. */
  async function fill(path: string, finish = true): Promise<void> {
    const cards: Card[] = emu.state()[BOARD_ID]!.cards;
    await fillMirror({ CARDBOARD_MIRROR: path }, await emulatorBoard(emu), cards, { fields: await emulatorSchema(emu), pageSize: 2, finish });
  }

  beforeAll(async () => {
    ({ location, drop } = await engine.lasting());
    env.CARDBOARD_MIRROR = location;
    emu = await startTestEmulator({ pageSize: 2 });
    const values = [
      ['Name=one', 'Status=Open', 'Priority:=1'],
      ['Name=two', 'Status=Done', 'Priority:=5'],
      ['Name=three', 'Priority:="7"'],
      ['Name=Four', 'Status=Open', 'Priority=high'],
      ['Name=five', 'Status=Done', 'Owner:=["x","y"]'],
      ['Name=six', 'Status=Open', 'Priority:=9', 'Owner:=null'],
      ['Name=seven', 'Status=Open', 'Owner:={"name":"Ada"}'],
    ];
    await putCards(emu, values);
    await fill(location);
  });
  afterAll(async () => {
    await emu.close();
    await drop();
  });
  beforeEach(() => {
    emu.resetRequests();
  });

  it('makes no request, and says how old the mirror is in one line on stderr (built binary)', async () => {
    const r = await cli(emu, ['card', 'list', '--mirror', '--where', 'Status=Open'], { env, spawn: true });
    expect(r.code, r.stderr).toBe(0);
    expect(ndjson(r.stdout).map((c) => c.Name)).toEqual(['one', 'Four', 'six', 'seven']);
    expect(r.stderr).toMatch(/^From the mirror \(pulled \d+s ago, 7 cards\)\.\n$/);
    expect(emu.requests()).toEqual([]);
  });

  it('gives the same cards as the live listing for every expression', async () => {
    const sets = [[], ['Status=Open'], ['Status!=Open'], ['Status='], ['Status!='], ['Name~F'], ['Priority>4'], ['Priority<6'], ['Owner~"x"'], ['Owner='], ['Owner~ada'], ['Status=Open', 'Priority>2'], ['_id!=nothing', 'Name~e']];
    for (const exprs of sets) {
      const args = ['card', 'list', '--all', ...exprs.flatMap((e) => ['--where', e])];
      const live = await cli(emu, args, { env });
      const mirror = await cli(emu, [...args, '--mirror'], { env });
      expect(mirror.code, mirror.stderr).toBe(0);
      expect(ids(mirror.stdout), exprs.join(' ')).toEqual(ids(live.stdout));
      expect(mirror.stdout).toBe(live.stdout);
    }
  });

  it('--limit, --fields and --format work as live; --quiet drops the age line', async () => {
    const r = await cli(emu, ['card', 'list', '--mirror', '--where', 'Status=Open', '--limit', '3', '--fields', 'Name,Priority', '--format', 'csv', '--quiet'], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
    const cards = emu.state()[BOARD_ID]!.cards;
    expect(parse(r.stdout)).toEqual([
      ['_id', 'Name', 'Priority'],
      [cards[0]!._id, 'one', '1'],
      [cards[3]!._id, 'Four', 'high'],
      [cards[5]!._id, 'six', '9'],
    ]);
    const json = await cli(emu, ['card', 'list', '--mirror', '--json', '--limit', '2'], { env });
    expect(JSON.parse(json.stdout)).toEqual(cards.slice(0, 2));
    expect(emu.requests()).toEqual([]);
  });

  it('a wrong field name: exit 2 with the field it may mean, from the saved schema, and no request', async () => {
    const r = await cli(emu, ['card', 'list', '--mirror', '--where', 'Priorty>3'], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("error: --where 'Priorty>3': unknown field 'Priorty' (did you mean 'Priority'?)");
    const fields = await cli(emu, ['card', 'list', '--mirror', '--fields', 'name'], { env });
    expect(fields.code).toBe(2);
    expect(fields.stderr).toContain("unknown field 'name' (did you mean 'Name'?)");
    expect(emu.requests()).toEqual([]);
  });

  it('no mirror, or one never pulled whole: the error names `cardboard mirror pull`', async () => {
    const none = await cli(emu, ['card', 'list', '--mirror'], { env: { CARDBOARD_MIRROR: engine.name === 'sqlite' ? join(dir, 'none.db') : await engine.mirror() } });
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('cardboard mirror pull');
    const half = await engine.mirror();
    await fill(half, false);
    emu.resetRequests();
    const r = await cli(emu, ['card', 'list', '--mirror'], { env: { CARDBOARD_MIRROR: half } });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('has not been pulled whole yet');
    expect(r.stderr).toContain('cardboard mirror pull');
    expect(r.stdout).toBe('');
    expect(emu.requests()).toEqual([]);
  });

  it('needs no token: the board and base URL come from the flags, environment or config', async () => {
    const r = await cli(emu, ['card', 'list', '--mirror', '--where', 'Name=two'], { env: { ...env, CARDBOARD_TOKEN: undefined } });
    expect(r.code, r.stderr).toBe(0);
    expect(ndjson(r.stdout).map((c) => c.Name)).toEqual(['two']);
  });

  it('a terminal table stops at the same number of rows as a live one: exit 3, pointing to the streaming formats', async () => {
    const big = await engine.mirror();
    const cards = Array.from({ length: MAX_TABLE_ROWS + 1 }, (_, i) => ({ _id: `c${i}`, Name: `card ${i}` }));
    await fillMirror({ CARDBOARD_MIRROR: big }, await emulatorBoard(emu), cards, { fields: [{ name: 'Name', uuid: 'u1' }] as Field[] });
    const run = async (opts: Partial<CardListOptions>) => {
      const t = testContext({ tty: true, env: { CARDBOARD_BASE_URL: emu.url, CARDBOARD_BOARD: BOARD_ID, CARDBOARD_MIRROR: big, CARDBOARD_CONFIG_DIR: dir } });
      const err = await runCardList(t.ctx, { page: 0, all: true, mirror: true, ...opts }).catch((e: unknown) => e);
      return { err, rows: t.stdout.text.split('\n').filter((l) => /^c\d+ /.test(l)).length };
    };
    const cut = await run({});
    expect(cut.err).toBeInstanceOf(PartialError);
    expect(cut.rows).toBe(MAX_TABLE_ROWS);
    const matching = await run({ where: ['Name~card 1'] });
    expect(matching).toEqual({ err: undefined, rows: 1 + 10 + 100 + 1000 });
  });
});
