// `card list --where` against the emulator over real HTTP: the filter over every page (unless --page), --limit
// counting matching cards and reading no page after the one that reached it, field names checked with
// did-you-mean before any page is read.
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { BOARD_ID, pageRequests, type RunningEmulator, startTestEmulator } from '../helpers/emulator.js';
import { runOnPty } from '../helpers/pty.js';
import { cli, ndjson, putCards } from './helpers.js';

let emu: RunningEmulator;
let ids: string[];

beforeAll(async () => {
  // Pages of two: [one, two], [three, four], [five, six], [seven].
  emu = await startTestEmulator({ pageSize: 2 });
  const values = [
    ['Name=one', 'Status=Open', 'Priority:=1'],
    ['Name=two', 'Status=Done', 'Priority:=5'],
    ['Name=three', 'Priority:="7"'],
    ['Name=Four', 'Status=Open', 'Priority=high'],
    ['Name=five', 'Status=Done'],
    ['Name=six', 'Status=Open', 'Priority:=9', 'Owner:=null'],
    ['Name=seven', 'Status=Open', 'Owner:={"name":"Ada"}'],
  ];
  ids = await putCards(emu, values);
});
afterAll(async () => {
  await emu.close();
});
beforeEach(() => {
  emu.resetRequests();
});

const names = (stdout: string) => ndjson(stdout).map((c) => c.Name);

describe('card list --where, live', () => {
  it('reads every page and prints the matching cards (built binary)', async () => {
    const r = await cli(emu, ['card', 'list', '--where', 'Status=Open'], { spawn: true });
    expect(r.code, r.stderr).toBe(0);
    expect(names(r.stdout)).toEqual(['one', 'Four', 'six', 'seven']);
    expect(pageRequests(emu)).toEqual(['0', '1', '2', '3', '4']);
  });

  it('each operator, and several --where all holding', async () => {
    const run = async (...exprs: string[]) => names((await cli(emu, ['card', 'list', ...exprs.flatMap((e) => ['--where', e])])).stdout);
    expect(await run('Status!=Open')).toEqual(['two', 'three', 'five']);
    expect(await run('Name~F')).toEqual(['Four', 'five']);
    expect(await run('Priority>4')).toEqual(['two', 'three', 'six']);
    expect(await run('Priority<4')).toEqual(['one']);
    expect(await run('Status=')).toEqual(['three']);
    expect(await run('Owner=')).toEqual(['one', 'two', 'three', 'Four', 'five', 'six']);
    expect(await run('Owner~ada')).toEqual(['seven']);
    expect(await run('Status=Open', 'Priority>2')).toEqual(['six']);
    expect(await run(`_id=${ids[4]}`)).toEqual(['five']);
  });

  it('--limit counts matching cards and reads no page after the one that reached it', async () => {
    const r = await cli(emu, ['card', 'list', '--where', 'Status=Open', '--limit', '2']);
    expect(r.code, r.stderr).toBe(0);
    expect(names(r.stdout)).toEqual(['one', 'Four']);
    expect(pageRequests(emu)).toEqual(['0', '1']);
  });

  it('--page filters that page only', async () => {
    const r = await cli(emu, ['card', 'list', '--where', 'Status=Open', '--page', '1']);
    expect(names(r.stdout)).toEqual(['Four']);
    expect(pageRequests(emu)).toEqual(['1']);
  });

  it('--fields and --format work as without --where', async () => {
    const r = await cli(emu, ['card', 'list', '--where', 'Status=Done', '--fields', 'Name,Priority', '--format', 'csv']);
    expect(r.code, r.stderr).toBe(0);
    expect(parse(r.stdout)).toEqual([
      ['_id', 'Name', 'Priority'],
      [ids[1], 'two', '5'],
      [ids[4], 'five', ''],
    ]);
    const json = await cli(emu, ['card', 'list', '--where', 'Name=seven', '--json']);
    expect(JSON.parse(json.stdout)).toEqual([emu.state()[BOARD_ID]!.cards[6]]);
  });

  it('a wrong field name: exit 2 with the field it may mean, and no page read (built binary)', async () => {
    const r = await cli(emu, ['card', 'list', '--where', 'Stauts=Open'], { spawn: true });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--where 'Stauts=Open': unknown field 'Stauts' (did you mean 'Status'?)");
    // One error line and its hint, as `card put` says it (then the usage line of every usage error).
    expect(r.stderr.split('\n').slice(0, 2)).toEqual([
      "error: --where 'Stauts=Open': unknown field 'Stauts' (did you mean 'Status'?); field names are case-sensitive",
      'hint: Run `cardboard schema` for the exact names.',
    ]);
    expect(r.stdout).toBe('');
    expect(pageRequests(emu)).toEqual([]);
  });

  it('no operator, or < without a number: exit 2 naming the expression', async () => {
    const none = await cli(emu, ['card', 'list', '--where', 'Status']);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("--where 'Status': it has no operator");
    // Found before any request.
    expect(emu.requests()).toEqual([]);
    const nan = await cli(emu, ['card', 'list', '--where', 'Priority<high']);
    expect(nan.code).toBe(2);
    expect(nan.stderr).toContain("--where 'Priority<high': < compares numbers");
  });

  it('--mirror with --page is a usage error', async () => {
    const r = await cli(emu, ['card', 'list', '--mirror', '--page', '1']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--page and --mirror cannot be used together');
  });

  it('on a terminal: a table of the matching cards, and progress counting pages, cards and matches while it reads', async () => {
    // Each page takes a while, so the spinner draws its text between pages.
    emu.setFaults('delay:150ms');
    try {
      const r = await runOnPty(['card', 'list', '--where', 'Status=Open', '--fields', 'Name'], {
        CARDBOARD_BASE_URL: emu.url,
        CARDBOARD_BOARD: BOARD_ID,
        CARDBOARD_TOKEN: emu.boards[BOARD_ID]!.token,
        NO_COLOR: '1',
        CI: undefined,
      });
      const plain = r.screen.replace(/\x1b\[[0-?]*[ -/]*[@-~]/g, '');
      expect(r.code, plain.slice(-1000)).toBe(0);
      expect(plain).toMatch(/Reading the board: \d+ pages?, \d+ cards?, \d+ matching/);
      expect(plain.match(/^\S+ +(one|Four|six|seven)\s*$/gm)).toHaveLength(4);
    } finally {
      emu.setFaults(undefined);
    }
  });
});
