import fc from 'fast-check';
import stringWidth from 'string-width';
import { describe, expect, it } from 'vitest';
import { breakText, displayWidth, shorten, wrapText } from '../../src/io/width.js';

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

// Pieces of text from many scripts: the fast path (one cluster per code point) must agree with string-width.
const PIECES = ['a', 'Z', ' ', '漢', 'テ', 'ｱ', 'ﾞ', 'ｱﾞ', 'Ａ', '한', '\u1100\u1161', 'ä', 'e\u0301', '\u0301', 'ก', 'ี', 'क', 'ि', 'ع', '\u0600', '…', '─', '★', '⚠', '\ufe0f', '\u200d', '👍', '🏽', '🇫', '🇷', FAMILY, CODER, '1\u20e3', 'Ω', '¢', '\u00ad', '\u3000', '\u{20000}', '\u0d4e', 'മ'];

describe('displayWidth agrees with string-width', () => {
  it('on any mix of scripts, marks and emoji', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...PIECES), { maxLength: 12 }), (parts) => {
        const text = parts.join('');
        expect(displayWidth(text)).toBe(stringWidth(text));
        // Cut anywhere: never wider than asked, and a prefix of the text (less the ellipsis).
        for (const w of [1, 3, 7]) {
          const cut = shorten(text, w);
          expect(displayWidth(cut)).toBeLessThanOrEqual(w);
          expect(text.startsWith(cut.endsWith('…') && cut !== text ? cut.slice(0, -1) : cut)).toBe(true);
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe('shorten', () => {
  it('leaves text that fits, cuts the rest with … by display width', () => {
    expect(shorten('short', 5)).toBe('short');
    expect(shorten('longer text', 6)).toBe('longe…');
    // 漢字テキスト is 12 columns; 7 leaves room for three ideographs (6) and the ellipsis.
    expect(shorten('漢字テキスト', 7)).toBe('漢字テ…');
    // A width that would cut an ideograph in half leaves a column short instead.
    expect(shorten('漢字テキスト', 6)).toBe('漢字…');
  });
  it('never splits an emoji sequence or a letter from its combining mark', () => {
    expect(shorten(`ab${FAMILY}${FAMILY}`, 5)).toBe(`ab${FAMILY}…`);
    expect(shorten(`a${FAMILY}cd`, 3)).toBe('a…');
    expect(shorten(E_ACUTE.repeat(10), 4)).toBe(`${E_ACUTE.repeat(3)}…`);
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
