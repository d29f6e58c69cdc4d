// `cardboard import` over HTTP with files that mix line breaks, against the emulator and the independent
// server. Before lines.ts, a CRLF header with LF rows imported one card whose Name held every row
// ("rows 1, created 1"), and an LF header with CRLF rows stored `Status: "Open\r"`, both without an error.
// The board is read back: exactly the right cards, exact values, the summary counts and lines right.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { cli } from '../commands/helpers.js';
import { tempDir } from '../helpers/cli.js';
import { BOARD_ID, type RunningEmulator } from '../helpers/emulator.js';
import { run, start as startAlt } from '../conformance/helpers.js';
import { readResults, start } from './helpers.js';

/** The two files of the attack: a CRLF header with LF rows, an LF header with CRLF rows. */
const CRLF_HEADER_LF_ROWS = 'Name\r\nsolo-a\nsolo-b\nsolo-c\n';
const LF_HEADER_CRLF_ROWS = 'Name,Status\nrow-a,Open\r\nrow-b,Done\r\n';

function write(name: string, content: string): string {
  const path = join(tempDir(), name);
  writeFileSync(path, content);
  return path;
}

/** The board's cards without their ids, in name order (eight requests in flight: arrival order varies). */
function cards(emu: RunningEmulator): Record<string, unknown>[] {
  const all = emu.state()[BOARD_ID]!.cards.map(({ _id, ...rest }) => rest);
  return all.sort((a, b) => String(a.Name).localeCompare(String(b.Name)));
}

const summary = (stdout: string) => JSON.parse(stdout) as Record<string, unknown>;

describe('import: files mixing CRLF, LF and CR, against the emulator', () => {
  it('a CRLF header with LF rows: three cards, one per row, each name exact', async () => {
    const e = await start();
    const file = write('crlf-header.csv', CRLF_HEADER_LF_ROWS);
    const results = join(tempDir(), 'results.csv');
    const r = await cli(e, ['import', file, '--json', '--results', results]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(summary(r.stdout)).toMatchObject({ rows: 3, created: 3, updated: 0, rejected: 0, uncertain: 0 });
    expect(cards(e)).toEqual([{ Name: 'solo-a' }, { Name: 'solo-b' }, { Name: 'solo-c' }]);
    expect(readResults(results).map((x) => [x.line, x.state]).sort()).toEqual([
      ['2', 'created'],
      ['3', 'created'],
      ['4', 'created'],
    ]);
  });

  it('an LF header with CRLF rows: no CR stored in any value, from a file and from stdin', async () => {
    const e = await start();
    const r = await cli(e, ['import', write('lf-header.csv', LF_HEADER_CRLF_ROWS), '--json']);
    expect(r.code).toBe(0);
    expect(summary(r.stdout)).toMatchObject({ rows: 2, created: 2, rejected: 0 });
    expect(cards(e)).toEqual([
      { Name: 'row-a', Status: 'Open' },
      { Name: 'row-b', Status: 'Done' },
    ]);

    // stdin has no pre-scan: the reader alone. --match-on finds both cards holding exactly these values.
    const again = await cli(e, ['import', '-', '--json', '--match-on', 'Name'], { input: 'Name,Status\r\nrow-a,Open\nrow-b,Done\r' });
    expect(summary(again.stdout)).toMatchObject({ rows: 2, created: 0, unchanged: 2 });
    expect(cards(e)).toHaveLength(2);
  });

  it('lone CRs, CR/LF/CRLF in turn, blank lines, quoted line breaks and a bad row: values exact, lines right', async () => {
    const e = await start();
    const dir = tempDir();
    // line 1 header (CR) | 2 a (LF) | 3 blank (CRLF) | 4-5 b, Owner "Ada<CRLF>Lovelace" (CR) | 6 short (CRLF)
    // | 7 blank (CR) | 8-9 c, Owner "x<CR>y" (LF) | 10 d, no final break
    const file = join(dir, 'mixed.csv');
    writeFileSync(file, 'Name,Status,Owner\rm-a,Open,Al\n\r\nm-b,Done,"Ada\r\nLovelace"\rshort\r\n\rm-c,Open,"x\ry"\nm-d,Done,');
    const [results, rejects] = [join(dir, 'res.csv'), join(dir, 'rej.csv')];
    const r = await cli(e, ['import', file, '--json', '--results', results, '--rejects', rejects]);
    expect(r.code).toBe(3);
    expect(summary(r.stdout)).toMatchObject({ rows: 5, created: 4, rejected: 1 });
    expect(cards(e)).toEqual([
      { Name: 'm-a', Status: 'Open', Owner: 'Al' },
      { Name: 'm-b', Status: 'Done', Owner: 'Ada\r\nLovelace' },
      { Name: 'm-c', Status: 'Open', Owner: 'x\ry' },
      { Name: 'm-d', Status: 'Done' },
    ]);
    expect(readResults(results).map((x) => [x.line, x.state]).sort((a, b) => Number(a[0]) - Number(b[0]))).toEqual([
      ['2', 'created'],
      ['4', 'created'],
      ['6', 'rejected'],
      ['8', 'created'],
      ['10', 'created'],
    ]);
    const rejected = parse(readFileSync(rejects), { columns: true }) as Record<string, string>[];
    expect(rejected.map((x) => [x.Name, x._cardboard_reason])).toEqual([['short', 'rejected: line 6: expected 3 fields, found 1']]);
  });

  it('a .tsv file mixing CRLF and LF', async () => {
    const e = await start();
    const r = await cli(e, ['import', write('cards.tsv', 'Name\tStatus\r\nt-a\tOpen\nt-b\tDone\r\n'), '--json']);
    expect(summary(r.stdout)).toMatchObject({ rows: 2, created: 2 });
    expect(cards(e)).toEqual([
      { Name: 't-a', Status: 'Open' },
      { Name: 't-b', Status: 'Done' },
    ]);
  });
});

describe('import: files mixing CRLF, LF and CR, against the independent server', () => {
  it.each([
    ['a CRLF header with LF rows', 'Title\r\nsolo-a\nsolo-b\nsolo-c\n', [{ Title: 'solo-a' }, { Title: 'solo-b' }, { Title: 'solo-c' }]],
    [
      'an LF header with CRLF rows',
      'Title,Status\nrow-a,Open\r\nrow-b,Done\r\n',
      [
        { Title: 'row-a', Status: 'Open' },
        { Title: 'row-b', Status: 'Done' },
      ],
    ],
  ])('%s: exactly these cards', async (_name, content, want) => {
    const server = await startAlt({ updateMode: 'Always Create New' });
    const r = await run(server, ['import', write('in.csv', content), '--json']);
    expect(r.code).toBe(0);
    expect(summary(r.stdout)).toMatchObject({ rows: want.length, created: want.length, rejected: 0 });
    // The server's own keys (id, createdAt, boardId) aside, each card holds exactly the row's values.
    const got = server.cards.map(({ _id, createdAt: _created, boardId: _board, ...fields }) => fields).sort((a, b) => String(a.Title).localeCompare(String(b.Title)));
    expect(got).toEqual(want);
  });
});
