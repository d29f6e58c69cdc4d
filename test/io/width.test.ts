import { describe, expect, it } from 'vitest';
import { breakText, displayWidth, truncateText, wrapText } from '../../src/io/width.js';

const FAMILY = '👩‍👩‍👧‍👦';
const CODER = '🧑‍💻';
const E_ACUTE = 'e\u0301';

describe('displayWidth', () => {
  it('counts CJK as 2, an emoji ZWJ sequence as 2, combining marks as 0', () => {
    expect(displayWidth('漢字')).toBe(4);
    expect(displayWidth(FAMILY)).toBe(2);
    expect(displayWidth(CODER)).toBe(2);
    expect(displayWidth(E_ACUTE.repeat(3))).toBe(3);
  });
});

describe('truncateText', () => {
  it('leaves text that fits, cuts the rest with … by display width', () => {
    expect(truncateText('short', 5)).toBe('short');
    expect(truncateText('longer text', 6)).toBe('longe…');
    // 漢字テキスト is 12 columns; 7 leaves room for three ideographs (6) and the ellipsis.
    expect(truncateText('漢字テキスト', 7)).toBe('漢字テ…');
    // A width that would cut an ideograph in half leaves a column short instead.
    expect(truncateText('漢字テキスト', 6)).toBe('漢字…');
  });
  it('never splits an emoji sequence or a letter from its combining mark', () => {
    expect(truncateText(`ab${FAMILY}${FAMILY}`, 5)).toBe(`ab${FAMILY}…`);
    expect(truncateText(`a${FAMILY}cd`, 3)).toBe('a…');
    expect(truncateText(E_ACUTE.repeat(10), 4)).toBe(`${E_ACUTE.repeat(3)}…`);
  });
});

describe('wrapText', () => {
  it('breaks at spaces, keeps its own line breaks, and loses no character', () => {
    expect(wrapText('the quick brown fox jumps', 10)).toEqual(['the quick', 'brown fox', 'jumps']);
    expect(wrapText('one\ntwo three', 5)).toEqual(['one', 'two', 'three']);
  });
  it('breaks CJK text (no spaces) between ideographs, never inside one', () => {
    const text = '漢字テキストの長い説明です';
    const lines = wrapText(text, 7);
    expect(lines.join('')).toBe(text);
    for (const line of lines) expect(displayWidth(line)).toBeLessThanOrEqual(7);
    expect(lines[0]).toBe('漢字テ');
  });
  it('keeps emoji sequences whole across lines', () => {
    const lines = wrapText(FAMILY.repeat(5), 5);
    expect(lines).toEqual([FAMILY.repeat(2), FAMILY.repeat(2), FAMILY]);
  });
});

describe('breakText', () => {
  it('breaks only between clusters, each piece at most the width', () => {
    expect(breakText('abcdefgh', 3)).toEqual(['abc', 'def', 'gh']);
    expect(breakText(`${CODER}${CODER}x`, 3)).toEqual([CODER, `${CODER}x`]);
  });
});
