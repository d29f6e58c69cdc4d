// Input read as written: a record ends at CRLF, LF or CR, whatever the first line used, and a CR is never
// part of an unquoted value. Over HTTP against the emulator, the board read back.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli } from '../commands/helpers.js';
import { tempDir } from '../helpers/cli.js';
import { BOARD_ID } from '../helpers/emulator.js';
import { start } from './helpers.js';

describe('import: any mix of line endings', () => {
  it.each([
    ['a CRLF header with LF rows', 'Name,Status\r\nsolo-a,Open\nsolo-b,Open\nsolo-c,Open\n'],
    ['an LF header with CRLF rows', 'Name,Status\nsolo-a,Open\r\nsolo-b,Open\r\nsolo-c,Open\r\n'],
    ['lone CRs', 'Name,Status\rsolo-a,Open\rsolo-b,Open\rsolo-c,Open'],
    ['every kind, quoted line breaks kept', 'Name,Status\r\nsolo-a,"Open"\rsolo-b,Open\n"solo-c",Open\r\n'],
  ])('%s: one card per row, no CR in a value', async (_name, text) => {
    const e = await start();
    const file = join(tempDir(), 'mix.csv');
    writeFileSync(file, text);
    const r = await cli(e, ['import', file, '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ rows: 3, created: 3 });
    const cards = e.state()[BOARD_ID]!.cards.map((c) => [c.Name, c.Status]);
    expect(cards).toEqual([
      ['solo-a', 'Open'],
      ['solo-b', 'Open'],
      ['solo-c', 'Open'],
    ]);
  });

  it('a quoted value keeps its own CRLF, LF and CR exactly', async () => {
    const e = await start();
    const file = join(tempDir(), 'quoted.csv');
    writeFileSync(file, 'Name,Status\nq-1,"a\r\nb\nc\rd"\r\nq-2,Open\r');
    const r = await cli(e, ['import', file, '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(e.state()[BOARD_ID]!.cards.map((c) => [c.Name, c.Status])).toEqual([
      ['q-1', 'a\r\nb\nc\rd'],
      ['q-2', 'Open'],
    ]);
  });
});
