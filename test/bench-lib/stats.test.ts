// The benchmark runner's pure pieces (test/bench/lib/stats.mjs): its arguments, the round order and the table's
// statistics. The bench itself is never run by the suite.
import { describe, expect, it } from 'vitest';
import { abbaOrder, figure, median, notIn, num, pairedRatio, parseArgs, ratioText, sig, summary, UsageError, USAGE } from '../bench/lib/stats.mjs';

describe('parseArgs', () => {
  it('defaults to every scenario, no Node line and no ref', () => {
    const opts = parseArgs([], ['a', 'b']);
    expect(opts).toEqual({ quick: false, only: ['a', 'b'], nodes: [], against: undefined });
  });

  it('reads --quick, --only, repeated --node (line or path) and --against, with a space or =', () => {
    const opts = parseArgs(['--against', 'e008ef5', '--node', '22', '--node=/opt/node', '--only', 'b', '--quick'], ['a', 'b']);
    expect(opts).toEqual({ quick: true, only: ['b'], nodes: ['22', '/opt/node'], against: 'e008ef5' });
    expect(parseArgs(['--only=a,b', '--against=main'], ['a', 'b'])).toMatchObject({ only: ['a', 'b'], against: 'main' });
  });

  it('refuses unknown arguments, unknown scenarios and flags without their value, in one line', () => {
    expect(() => parseArgs(['--fast'], ['a'])).toThrow(new UsageError('unknown argument --fast'));
    expect(() => parseArgs(['--only', 'a,c'], ['a'])).toThrow(new UsageError('unknown scenario c'));
    expect(() => parseArgs(['--against'], ['a'])).toThrow(new UsageError('--against needs a value'));
    expect(() => parseArgs(['--node', '--quick'], ['a'])).toThrow(new UsageError('--node needs a value'));
    expect(() => parseArgs(['--quick=1'], ['a'])).toThrow(UsageError);
    expect(USAGE).toMatch(/^usage: npm run bench -- .*--against REF/);
    expect(USAGE).not.toContain('\n');
  });
});

describe('abbaOrder', () => {
  it('gives the items as they are in even rounds and reversed in odd ones', () => {
    const items = ['A', 'B', 'C'];
    expect([0, 1, 2, 3].map((r) => abbaOrder(items, r).join(''))).toEqual(['ABC', 'CBA', 'ABC', 'CBA']);
    expect(items).toEqual(['A', 'B', 'C']);
  });

  it('puts every item as often early as late over two rounds', () => {
    const items = ['A', 'B', 'C', 'D'];
    const positions = new Map(items.map((i) => [i, 0]));
    for (const r of [0, 1]) abbaOrder(items, r).forEach((item, k) => positions.set(item, positions.get(item)! + k));
    expect(new Set(positions.values()).size).toBe(1);
  });
});

describe('statistics and their text', () => {
  it('median: the middle one, or the mean of the two middle ones', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNaN();
  });

  it('summary and paired ratios: each pair divided, then summarised', () => {
    expect(summary([5, 1, 3])).toEqual({ median: 3, min: 1, max: 5, n: 3 });
    expect(pairedRatio([10, 20, 30], [10, 10, 60])).toEqual({ median: 1, min: 0.5, max: 2, n: 3 });
  });

  it('numbers to 3 significant figures with thousands separated', () => {
    expect(sig(4363.7)).toBe(4360);
    expect(num(10123)).toBe('10,100');
    expect(num(0.93812)).toBe('0.938');
  });

  it('a figure shows its spread only over more than one sample', () => {
    expect(figure([4360, 4170, 4830], 'rows/s')).toBe('4,360 rows/s (4,170–4,830)');
    expect(figure([89.14], 'ms')).toBe('89.1 ms');
    expect(ratioText(pairedRatio([9, 10], [10, 10]))).toBe('0.95× (0.9–1)');
    expect(ratioText(pairedRatio([12], [10]))).toBe('1.2×');
    expect(notIn('e008ef5')).toBe('— (not in e008ef5)');
  });
});
