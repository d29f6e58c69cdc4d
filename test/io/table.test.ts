import { describe, expect, it } from 'vitest';
import { fitWidths, gapsWidth, layoutTable, renderTable } from '../../src/io/table.js';
import { displayWidth } from '../../src/io/width.js';
import { testContext } from './buffers.js';

describe('fitWidths', () => {
  const col = (natural: number, floor = Math.min(natural, 6)) => ({ natural, floor });
  it('keeps natural widths that fit', () => {
    expect(fitWidths([col(5), col(10)], 100)).toEqual([5, 10]);
  });
  it('shrinks the widest column first, to exactly the terminal width', () => {
    const widths = fitWidths([col(10), col(80), col(30)], 80) as number[];
    expect(widths.reduce((a, b) => a + b, 0) + gapsWidth(3)).toBe(80);
    expect(widths[0]).toBe(10);
    expect(widths[1]).toBeGreaterThanOrEqual(widths[2]!);
  });
  it('never shrinks a column below its floor (a kept `_id`): the last columns are left out instead', () => {
    // 24 + 6 + 6 and two gaps of 2 is 40: the fourth column cannot have even its floor.
    expect(fitWidths([col(24, 24), col(30), col(30), col(30)], 40)).toEqual([24, 6, 6, undefined]);
    expect(fitWidths([col(24, 24), col(30), col(30), col(30)], 39)).toEqual([24, 13, undefined, undefined]);
  });
  it('leaves columns out until the others get what they want, then shares the room', () => {
    const want = { natural: 10, floor: 6, want: 10 };
    // 4 columns of 10 need 40 + 6 of gaps: at 45 one goes, and the three left are whole.
    expect(fitWidths([want, want, want, want], 45)).toEqual([10, 10, 10, undefined]);
  });
  it('leaves nothing out when dropping is off (a record): shrinks below the floors, last column first', () => {
    const widths = fitWidths([col(10), col(24, 24)], 20, false) as number[];
    expect(widths.reduce((a, b) => a + b, 0) + gapsWidth(2)).toBe(20);
  });
});

describe('renderTable', () => {
  it('cuts a cell between escapes and between clusters: never `\\…`, never half an emoji', () => {
    const { ctx, stdout } = testContext({ tty: true });
    // 39 columns: `_id` takes 3 and the gap 2, so Notes is 34 wide: 33 before the ellipsis, an odd number.
    stdout.columns = 39;
    const { text } = layoutTable(ctx, ['_id', 'Notes'], [['c1', '\u001b'.repeat(100)], ['c2', `${'x'.repeat(32)}😀😀`]]);
    const lines = text.trimEnd().split('\n');
    expect(lines).toEqual(['_id  Notes', `c1   ${'\\e'.repeat(16)}…`, `c2   ${'x'.repeat(32)}…`]);
    for (const line of lines) expect(displayWidth(line)).toBeLessThanOrEqual(39);
  });
  it('fits the terminal width and truncates long cells with an ellipsis', async () => {
    const { ctx } = testContext({ tty: true });
    const out = await renderTable(ctx, ['_id', 'Name'], [['c1', 'x'.repeat(300)]]);
    for (const line of out.trimEnd().split('\n')) expect(line.length).toBeLessThanOrEqual(100);
    expect(out).toContain('…');
  });
  it('wraps instead of truncating when asked (a single record)', async () => {
    const { ctx } = testContext({ tty: true });
    const out = await renderTable(ctx, ['field', 'value'], [['Notes', `${'a'.repeat(150)}END`]], { wrap: true });
    expect(out).not.toContain('…');
    expect(out).toContain('END');
    for (const line of out.trimEnd().split('\n')) expect(line.length).toBeLessThanOrEqual(100);
  });
  it('puts a bold header only when colour is allowed', async () => {
    const plain = await renderTable(testContext({ tty: true }).ctx, ['h'], [['v']]);
    expect(plain).not.toContain('\u001b[');
    const coloured = await renderTable(testContext({ tty: true, env: { NO_COLOR: undefined, TERM: 'xterm' } }).ctx, ['h'], [['v']]);
    expect(coloured).toContain('\u001b[1m');
  });
  it('escapes control, C1 and bidi characters in headers and cells; a list row stays one line', async () => {
    const { ctx } = testContext({ tty: true });
    const out = await renderTable(ctx, ['Title\u001b]0;pwned\u0007', 'evil\u202etxt'], [['a\u001b[1A\u001b[2K', 'one\ntwo\rthree\u009b']]);
    expect(out).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/);
    expect(out).toContain('Title\\e]0;pwned\\a');
    expect(out).toContain('evil\\u202etxt');
    expect(out).toContain('a\\e[1A\\e[2K');
    expect(out).toContain('one\\ntwo\\rthree\\x9b');
    expect(out.trimEnd().split('\n')).toHaveLength(2);
  });
  it('shows a line break in a wrapped cell (one record) as `\\n`, as a list row does', async () => {
    const { ctx } = testContext({ tty: true });
    const value = 'first\nsecond\u001b[2J';
    const record = await renderTable(ctx, ['field', 'value'], [['Notes', value]], { wrap: true });
    expect(record).toBe('field  value\nNotes  first\\nsecond\\e[2J\n');
    const list = await renderTable(ctx, ['_id', 'Notes'], [['c1', value]]);
    expect(list).toBe('_id  Notes\nc1   first\\nsecond\\e[2J\n');
  });
  it('puts cardboard\'s own bold on an escaped header', async () => {
    const { ctx } = testContext({ tty: true, env: { NO_COLOR: undefined, TERM: 'xterm' } });
    const out = await renderTable(ctx, ['h\u001b[31m'], [['v']]);
    expect(out).toContain('\u001b[1mh\\e[31m\u001b[22m');
  });
});
