import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { BOARD_ID, pageRequests, type RunningEmulator, startTestEmulator } from '../helpers/emulator.js';
import { cli, ndjson, putCards } from './helpers.js';

let emu: RunningEmulator;
let ids: string[];

beforeAll(async () => {
  emu = await startTestEmulator({ pageSize: 2 });
  const values = [
    ['Name=one', 'Status=Open'],
    ['Name=two, with comma', 'Owner=ann'],
    ['Name=three "quoted"', 'Priority:=3'],
    ['Name=four\nlines', 'Status=Done'],
    ['Name=five'],
  ];
  ids = await putCards(emu, values);
});
afterAll(async () => {
  await emu.close();
});
beforeEach(() => {
  emu.resetRequests();
});

describe('card list', () => {
  it('shows page 0 by default, ndjson when piped', async () => {
    const r = await cli(emu, ['card', 'list']);
    expect(r.code, r.stderr).toBe(0);
    expect(ndjson(r.stdout).map((c) => c._id)).toEqual(ids.slice(0, 2));
    expect(pageRequests(emu)).toEqual(['0']);
  });

  it('--page N shows that zero-based page', async () => {
    const r = await cli(emu, ['card', 'list', '--page', '1']);
    expect(ndjson(r.stdout).map((c) => c._id)).toEqual(ids.slice(2, 4));
  });

  it('--all walks every page until [] in ndjson', async () => {
    const r = await cli(emu, ['card', 'list', '--all']);
    expect(r.code, r.stderr).toBe(0);
    expect(ndjson(r.stdout)).toEqual(emu.state()[BOARD_ID]!.cards);
    expect(pageRequests(emu)).toEqual(['0', '1', '2', '3']);
  });

  it('--all --format csv: _id then the schema order, values that round-trip', async () => {
    const r = await cli(emu, ['card', 'list', '--all', '--format', 'csv']);
    expect(r.code, r.stderr).toBe(0);
    const rows = parse(r.stdout) as string[][];
    expect(rows[0]).toEqual(['_id', 'Name', 'Status', 'Owner', 'Priority']);
    expect(rows.slice(1)).toEqual([
      [ids[0], 'one', 'Open', '', ''],
      [ids[1], 'two, with comma', '', 'ann', ''],
      [ids[2], 'three "quoted"', '', '', '3'],
      [ids[3], 'four\nlines', 'Done', '', ''],
      [ids[4], 'five', '', '', ''],
    ]);
  });

  it('--all --format json prints one array', async () => {
    const r = await cli(emu, ['card', 'list', '--all', '--format', 'json']);
    expect(JSON.parse(r.stdout)).toEqual(emu.state()[BOARD_ID]!.cards);
  });

  it('--limit stops early and stops fetching pages', async () => {
    const r = await cli(emu, ['card', 'list', '--all', '--limit', '3']);
    expect(ndjson(r.stdout).map((c) => c._id)).toEqual(ids.slice(0, 3));
    expect(pageRequests(emu)).toEqual(['0', '1']);
    const exact = await cli(emu, ['card', 'list', '--all', '--limit', '2', '--format', 'csv']);
    expect(exact.stdout.trim().split('\r\n')).toHaveLength(3);
  });

  it('--limit without --all reads as many pages as it needs from page 0, and no more (built binary)', async () => {
    const r = await cli(emu, ['card', 'list', '--limit', '3'], { spawn: true });
    expect(r.code, r.stderr).toBe(0);
    expect(ndjson(r.stdout).map((c) => c._id)).toEqual(ids.slice(0, 3));
    expect(r.stderr).toBe('');
    expect(pageRequests(emu)).toEqual(['0', '1']);
  });

  it('--page with --limit starts there and stops at the empty page when the board ends first', async () => {
    const r = await cli(emu, ['card', 'list', '--page', '1', '--limit', '10', '--format', 'csv'], { spawn: true });
    expect(r.code, r.stderr).toBe(0);
    expect((parse(r.stdout) as string[][]).slice(1).map((row) => row[0])).toEqual(ids.slice(2));
    expect(pageRequests(emu)).toEqual(['1', '2', '3']);
  });

  it('--json is --format json; with another --format it is a usage error and nothing is sent', async () => {
    const r = await cli(emu, ['card', 'list', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(emu.state()[BOARD_ID]!.cards.slice(0, 2));
    const both = await cli(emu, ['card', 'list', '--json', '--format', 'json', '--all']);
    expect(JSON.parse(both.stdout)).toEqual(emu.state()[BOARD_ID]!.cards);
    emu.resetRequests();
    const clash = await cli(emu, ['card', 'list', '--json', '--format', 'csv']);
    expect(clash.code).toBe(2);
    expect(clash.stdout).toBe('');
    expect(clash.stderr).toContain('--json and --format csv cannot be used together');
    expect(emu.requests()).toEqual([]);
  });

  it('a page past the end piped: nothing on stdout (json: []), nothing on stderr, exit 0', async () => {
    const nd = await cli(emu, ['card', 'list', '--page', '9']);
    expect([nd.code, nd.stdout, nd.stderr]).toEqual([0, '', '']);
    const json = await cli(emu, ['card', 'list', '--page', '9', '--json']);
    expect([json.code, json.stdout, json.stderr]).toEqual([0, '[]\n', '']);
  });

  it('--fields picks and orders columns, _id first', async () => {
    const r = await cli(emu, ['card', 'list', '--all', '--fields', 'Status, Name', '--format', 'csv']);
    const rows = parse(r.stdout) as string[][];
    expect(rows[0]).toEqual(['_id', 'Status', 'Name']);
    expect(rows[1]).toEqual([ids[0], 'Open', 'one']);
    const nd = await cli(emu, ['card', 'list', '--fields', 'Owner']);
    expect(ndjson(nd.stdout)).toEqual([{ _id: ids[0] }, { _id: ids[1], Owner: 'ann' }]);
  });

  it('--fields with a mis-cased name is a usage error with a suggestion, before any page is fetched', async () => {
    const r = await cli(emu, ['card', 'list', '--fields', 'status']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("did you mean 'Status'");
    expect(pageRequests(emu)).toEqual([]);
  });

  it('--format table piped: header and tab-separated rows', async () => {
    const r = await cli(emu, ['card', 'list', '--format', 'table']);
    expect(r.stdout).toBe(`_id\tName\tStatus\tOwner\tPriority\n${ids[0]}\tone\tOpen\t\t\n${ids[1]}\ttwo, with comma\t\tann\t\n`);
  });

  it('refuses --page with --all, a bad --format or a bad --limit, sending nothing', async () => {
    for (const args of [['--page', '1', '--all'], ['--format', 'xml'], ['--limit', '0'], ['--page', '-1']]) {
      const r = await cli(emu, ['card', 'list', ...args]);
      expect(r.code, args.join(' ')).toBe(2);
    }
    expect(emu.requests()).toEqual([]);
  });
});
