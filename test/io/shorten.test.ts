// The one way text for people is shortened (shorten) and made one line (oneLine): by grapheme cluster and
// display width, after the one escape policy (terminalText), with `…` counted in the width.
import fc from 'fast-check';
import stringWidth from 'string-width';
import { describe, expect, it } from 'vitest';
import { oneLine, quoted, terminalText } from '../../src/io/text.js';
import { displayWidth, shorten } from '../../src/io/width.js';

const FAMILY = '👩‍👩‍👧‍👦';
const FLAGS = '🇫🇷🇩🇪🇯🇵';
const E_ACUTE = 'e\u0301';
const LONE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

const segments = (s: string) => Array.from(new Intl.Segmenter(undefined, { granularity: 'grapheme' }).segment(s), (x) => x.segment);
const loneSurrogates = (s: string) => s.match(LONE)?.length ?? 0;

/** `cut` less its ellipsis is whole clusters from the start of `text`: it split none. */
function isClusterPrefix(text: string, cut: string): boolean {
  const kept = cut.endsWith('…') && cut !== text ? cut.slice(0, -1) : cut;
  if (!text.startsWith(kept)) return false;
  let at = 0;
  for (const seg of segments(text)) {
    if (at === kept.length) return true;
    if (at > kept.length) return false;
    at += seg.length;
  }
  return at === kept.length;
}

describe('shorten', () => {
  it('never splits a surrogate pair: 58 letters and two emoji at 60 columns', () => {
    const text = `${'a'.repeat(58)}😀😀`;
    expect(shorten(text, 60)).toBe(`${'a'.repeat(58)}…`);
    expect(shorten(text, 62)).toBe(text);
    expect(shorten(text, 61)).toBe(`${'a'.repeat(58)}😀…`);
  });
  it('keeps ZWJ sequences, flags and letters with their combining marks whole', () => {
    expect(shorten(`ab${FAMILY}${FAMILY}`, 5)).toBe(`ab${FAMILY}…`);
    expect(shorten(FLAGS, 5)).toBe('🇫🇷🇩🇪…');
    expect(shorten(FLAGS, 4)).toBe('🇫🇷…');
    expect(shorten(E_ACUTE.repeat(10), 4)).toBe(`${E_ACUTE.repeat(3)}…`);
  });
  it('counts CJK as two columns and the ellipsis as one', () => {
    expect(shorten('漢字テキスト', 12)).toBe('漢字テキスト');
    expect(shorten('漢字テキスト', 11)).toBe('漢字テキス…');
    expect(shorten('漢字テキスト', 10)).toBe('漢字テキ…');
    expect(shorten('a漢b', 3)).toBe('a…');
    expect(displayWidth(shorten('漢'.repeat(150), 200))).toBe(199);
  });
  it('drops the spaces before the ellipsis, and gives nothing to no room', () => {
    expect(shorten('ab   cdef', 5)).toBe('ab…');
    expect(shorten('ab 漢字', 4)).toBe('ab…');
    expect(shorten('abc', 0)).toBe('');
    expect(shorten('漢字', 1)).toBe('…');
    expect(shorten('', 3)).toBe('');
  });
  it('keeps a lone surrogate of the input where it was and makes none', () => {
    expect(shorten(`x\ud83d${'y'.repeat(10)}`, 5)).toBe('x\ud83dyyy…');
    expect(shorten(`\udc00${'😀'.repeat(5)}`, 5)).toBe('\udc00😀😀…');
  });

  const piece = fc.constantFrom('a', ' ', '漢', 'ｱ', E_ACUTE, '\u0301', '😀', FAMILY, '🧑‍💻', '🇫', '🇷', '👍🏽', '\u001b', '\u009b', '\u200d', '\u202e', '\ud83d', '\udc00', '\t', 'ß');
  it('on any mix: never wider than asked, whole clusters from the start, no lone surrogate made', () => {
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 30 }), fc.integer({ min: 0, max: 40 }), (parts, max) => {
        const text = parts.join('');
        const cut = shorten(text, max);
        expect(stringWidth(cut)).toBeLessThanOrEqual(Math.max(0, max));
        expect(isClusterPrefix(text, cut)).toBe(true);
        expect(loneSurrogates(cut)).toBeLessThanOrEqual(loneSurrogates(text));
        // Only text without controls is measured whole alike (string-width reads `\u009b…` as a sequence to skip).
        if (!/\p{Cc}/u.test(text) && displayWidth(text) <= max) expect(cut).toBe(text);
      }),
      { numRuns: 1000 },
    );
  });
});

describe('oneLine', () => {
  it('makes white space one space, escapes ESC as \\e, C0, C1, bidi and lone surrogates by code', () => {
    expect(oneLine('  a\u001b[31m\tb\r\n\nc\u2028d  ', 80)).toBe('a\\e[31m b c d');
    expect(oneLine('csi\u009b31m nel\u0085 bell\u0007 nul\u0000', 80)).toBe('csi\\x9b31m nel\\x85 bell\\a nul\\x00');
    expect(oneLine('evil\u202etxt zw\u200bsp', 80)).toBe('evil\\u202etxt zw\\u200bsp');
    expect(oneLine('half \ud83d of a pair', 80)).toBe('half \\ud83d of a pair');
    expect(oneLine(`ok ${FAMILY} é 漢`, 80)).toBe(`ok ${FAMILY} é 漢`);
  });
  it('counts the escapes and never cuts one in half', () => {
    expect(oneLine('\u001b'.repeat(10), 7)).toBe('\\e\\e\\e…');
    expect(oneLine('\u001b'.repeat(10), 8)).toBe('\\e\\e\\e…');
    expect(oneLine(`ab\u202e${'c'.repeat(10)}`, 8)).toBe('ab…');
    expect(oneLine(`ab\u202e${'c'.repeat(10)}`, 9)).toBe('ab\\u202e…');
    expect(oneLine(`ab\u202e${'c'.repeat(10)}`, 10)).toBe('ab\\u202ec…');
    expect(oneLine(`${'a'.repeat(198)}😀😀`, 200)).toBe(`${'a'.repeat(198)}…`);
  });

  const hostile = fc.array(fc.oneof(fc.integer({ min: 0, max: 0x9f }), fc.integer({ min: 0xd800, max: 0xdfff }), fc.constantFrom(0x202e, 0x2028, 0x200d, 0x1f600, 0x6f22, 0x301)), { maxLength: 60 }).map((cps) => cps.map((cp) => String.fromCodePoint(cp)).join(''));
  it('is one terminal-safe line of at most the width, and idempotent', () => {
    fc.assert(
      fc.property(hostile, fc.integer({ min: 1, max: 50 }), (text, max) => {
        const line = oneLine(text, max);
        expect(line).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202e]/);
        expect(loneSurrogates(line)).toBe(0);
        expect(displayWidth(line)).toBeLessThanOrEqual(max);
        expect(oneLine(line, max)).toBe(line);
        // What is kept is the start of the whole escaped line, cut between escapes.
        const whole = terminalText(text.replace(/\s+/g, ' ').trim());
        const kept = line.endsWith('…') && line !== whole ? line.slice(0, -1) : line;
        expect(whole.startsWith(kept)).toBe(true);
        if (!text.includes('\\')) expect(kept).not.toMatch(/\\(?:u[0-9a-f]{0,3}|x[0-9a-f]?)?$/);
      }),
      { numRuns: 1000 },
    );
  });
});

describe('terminalText with maxColumns', () => {
  it('escapes as without, then cuts by width between escapes: the same text when it fits', () => {
    expect(terminalText('a\u001b[1Ab\nc', { maxColumns: 20 })).toBe(terminalText('a\u001b[1Ab\nc'));
    expect(terminalText('a\u001b[1Ab\nc', { maxColumns: 8 })).toBe('a\\e[1Ab…');
    expect(terminalText('a\u001b[1Ab\nc', { maxColumns: 9 })).toBe('a\\e[1Ab…');
    expect(terminalText(`${'漢'.repeat(5)}\u0000`, { maxColumns: 10 })).toBe(`${'漢'.repeat(4)}…`);
  });
});

describe('quoted', () => {
  it('quotes with the one escape spelling, not JSON\'s', () => {
    expect(quoted('x\u001b[2Jy\n')).toBe('"x\\e[2Jy\\n"');
    expect(quoted('漢 😀')).toBe('"漢 😀"');
  });
});
