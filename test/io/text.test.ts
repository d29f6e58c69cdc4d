import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { terminalText, textFor, tsvField, tsvRow, valueText } from '../../src/io/text.js';

describe('valueText', () => {
  it('keeps strings, empties null, JSON for the rest', () => {
    expect(valueText('x')).toBe('x');
    expect(valueText(null)).toBe('');
    expect(valueText(2.5)).toBe('2.5');
    expect(valueText({ a: 1 })).toBe('{"a":1}');
  });
});

describe('tsvField', () => {
  it('escapes tab, newline, CR and backslash so a record stays on one line', () => {
    expect(tsvField('a\tb\nc\rd\\e')).toBe('a\\tb\\nc\\rd\\\\e');
  });
  it('builds a tab-separated line', () => {
    expect(tsvRow(['Name', 3, null])).toBe('Name\t3\t\n');
  });
});

// Independent of the implementation: a code point a terminal must never get raw.
function dangerous(cp: number): boolean {
  if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f)) return true; // C0, DEL, C1
  if (cp === 0x2028 || cp === 0x2029) return true; // line and paragraph separators
  if (cp >= 0xd800 && cp <= 0xdfff) return true; // a surrogate standing alone
  if (cp === 0x200d) return false; // ZWJ: emoji sequences need it
  return /^\p{Cf}$/u.test(String.fromCodePoint(cp)); // bidi overrides/isolates, zero-width, BOM, tags
}

/** Code points as JavaScript iterates a string: a lone surrogate is one of them. */
const codePoints = (s: string) => Array.from(s, (c) => c.codePointAt(0)!);

/** Undo terminalText for text that held no backslash: proves nothing was lost or merged. */
function unescape(s: string): string {
  const named: Record<string, string> = { a: '\u0007', b: '\b', t: '\t', n: '\n', v: '\v', f: '\f', r: '\r', e: '\u001b' };
  return s.replace(/\\(?:([abtnvfre])|x([0-9a-f]{2})|u\{([0-9a-f]+)\}|u([0-9a-f]{4}))/g, (_, n, x, big, u) =>
    n ? named[n]! : String.fromCodePoint(parseInt(x ?? big ?? u, 16)),
  );
}

// Strings that lean on the dangerous ranges, mixed with ordinary text.
const hostileChar = fc.oneof(
  fc.integer({ min: 0, max: 0x1f }),
  fc.integer({ min: 0x7f, max: 0x9f }),
  fc.constantFrom(0x200e, 0x200f, 0x061c, 0x2028, 0x2029, 0x200b, 0x200d, 0xfeff, 0x00ad, 0xe0001, 0xe0041, 0x110bd),
  fc.integer({ min: 0x202a, max: 0x202e }),
  fc.integer({ min: 0x2066, max: 0x2069 }),
  fc.integer({ min: 0xd800, max: 0xdfff }),
  fc.integer({ min: 0x20, max: 0x7e }),
  fc.integer({ min: 0, max: 0x10ffff }),
).map((cp) => String.fromCharCode(...(cp > 0xffff ? [0xd800 + ((cp - 0x10000) >> 10), 0xdc00 + ((cp - 0x10000) & 0x3ff)] : [cp])));
const hostileText = fc.array(hostileChar, { maxLength: 40 }).map((cs) => cs.join(''));

describe('terminalText', () => {
  it('never lets a dangerous code point through, whatever the input', () => {
    fc.assert(
      fc.property(fc.oneof(hostileText, fc.string({ unit: 'binary' })), (s) => {
        expect(codePoints(terminalText(s)).filter(dangerous)).toEqual([]);
        expect(codePoints(terminalText(s, { keepNewlines: true })).filter((cp) => cp !== 0x0a && dangerous(cp))).toEqual([]);
      }),
      { numRuns: 500 },
    );
  });
  it('is the identity on safe text: printable ASCII, accents, CJK, emoji with ZWJ, RTL letters', () => {
    const safe = fc.oneof(
      fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)) }),
      fc.string({ unit: fc.constantFrom('é', 'ß', '日', '本', '語', '한', 'א', 'ب', '👨‍👩‍👧', '🏳️‍🌈', '👍🏽', '\\', ' ') }),
    );
    fc.assert(
      fc.property(safe, (s) => {
        expect(terminalText(s)).toBe(s);
        expect(terminalText(s, { keepNewlines: true })).toBe(s);
      }),
    );
  });
  it('keeps every input distinguishable: without backslashes in the input, the escapes decode to it exactly', () => {
    fc.assert(
      fc.property(hostileText.filter((s) => !s.includes('\\')), (s) => {
        expect(unescape(terminalText(s))).toBe(s);
      }),
      { numRuns: 500 },
    );
  });
  it('is idempotent, so a line built from escaped parts may pass another sink', () => {
    fc.assert(
      fc.property(hostileText, (s) => {
        expect(terminalText(terminalText(s))).toBe(terminalText(s));
      }),
    );
  });
  it('shows the hostile sequences by name or code', () => {
    expect(terminalText('\u001b]0;pwned\u0007')).toBe('\\e]0;pwned\\a');
    expect(terminalText('\u001b[1A\u001b[2K')).toBe('\\e[1A\\e[2K');
    expect(terminalText('evil\u202etxt.exe')).toBe('evil\\u202etxt.exe');
    expect(terminalText('safe\roverwritten')).toBe('safe\\roverwritten');
    expect(terminalText('one\ntwo\tthree')).toBe('one\\ntwo\\tthree');
    expect(terminalText('one\ntwo\r', { keepNewlines: true })).toBe('one\ntwo\\r');
    expect(terminalText('crlf\r\nend\r\r\n', { keepNewlines: true })).toBe('crlf\nend\\r\n');
    expect(terminalText('crlf\r\n')).toBe('crlf\\r\\n');
    expect(terminalText('csi\u009b31m\u007f\u0000')).toBe('csi\\x9b31m\\x7f\\x00');
    expect(terminalText('a\ud800b\u2028\u{e0001}')).toBe('a\\ud800b\\u2028\\u{e0001}');
    expect(terminalText('C:\\dir\\e')).toBe('C:\\dir\\e');
  });
});

describe('textFor', () => {
  it('escapes on a terminal and keeps the data exact on a pipe', () => {
    expect(textFor({ isTTY: true }, 'id\u001b]0;x\u0007')).toBe('id\\e]0;x\\a');
    expect(textFor({ isTTY: false }, 'id\u001b]0;x\u0007')).toBe('id\u001b]0;x\u0007');
  });
});
