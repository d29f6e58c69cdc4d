import { describe, expect, it } from 'vitest';
import { fitWidths, renderTable } from '../../src/io/table.js';
import { testContext } from './buffers.js';

describe('fitWidths', () => {
  it('keeps widths that fit', () => {
    expect(fitWidths([5, 10], 100)).toEqual([5, 10]);
  });
  it('shrinks the widest column first until the frame fits', () => {
    const widths = fitWidths([10, 80, 30], 80);
    expect(widths.reduce((a, b) => a + b, 0) + 3 * 3 + 1).toBe(80);
    expect(widths[0]).toBe(10);
  });
  it('never shrinks below the minimum', () => {
    expect(fitWidths([40, 40], 10)).toEqual([6, 6]);
  });
});

describe('renderTable', () => {
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
    expect(out.trimEnd().split('\n')).toHaveLength(5);
  });
  it('keeps line breaks in a wrapped cell (one record) but escapes the rest', async () => {
    const { ctx } = testContext({ tty: true });
    const out = await renderTable(ctx, ['field', 'value'], [['Notes', 'first\nsecond\u001b[2J']], { wrap: true });
    expect(out).toMatch(/│ Notes\s+│ first\s+│\n│\s+│ second\\e\[2J\s+│/);
  });
  it('puts cardboard\'s own bold on an escaped header', async () => {
    const { ctx } = testContext({ tty: true, env: { NO_COLOR: undefined, TERM: 'xterm' } });
    const out = await renderTable(ctx, ['h\u001b[31m'], [['v']]);
    expect(out).toContain('\u001b[1mh\\e[31m\u001b[22m');
  });
});
