import crypto, { createHash } from 'node:crypto';
import { syncBuiltinESMExports } from 'node:module';
import fc from 'fast-check';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { keyMatcher } from '../../src/webhook/compare.js';

/** The check as a listener applies it: the key as the user typed it, the header as Node hands it over. */
const safeEqual = (key: string, sent: string) => keyMatcher(key)(Buffer.from(sent, 'utf8').toString('latin1'));
const signingKeyMatches = (header: string | string[] | undefined, key: string) => keyMatcher(key)(header);

describe('the key check, in constant time', () => {
  it('gives the same answer as === on arbitrary well-formed strings', () => {
    const str = fc.string({ unit: 'grapheme', maxLength: 40 });
    fc.assert(fc.property(str, str, (a, b) => safeEqual(a, b) === (a === b)), { numRuns: 2000 });
    fc.assert(fc.property(str, (a) => safeEqual(a, a) && safeEqual(a, `${a}`)));
  });

  it.each([
    ['sk-123', 'sk-123', true],
    ['sk-123', 'sk-1234', false],
    ['sk-1234', 'sk-123', false],
    ['sk-123', 'sk-12', false],
    ['', '', true],
    ['', 'sk', false],
    ['sk', '', false],
    ['SK-123', 'sk-123', false],
    ['clé-ünïcødé-🔑', 'clé-ünïcødé-🔑', true],
    ['clé-ünïcødé-🔑', 'clé-ünïcødé-🔐', false],
    // A lone surrogate never matches: it cannot come over the wire as UTF-8 (it arrives as U+FFFD).
    ['a\uD800', 'a\uDC00', false],
    ['sk-123\u0000', 'sk-123', false],
  ])('%j vs %j → %s', (a, b, want) => {
    expect(safeEqual(a, b)).toBe(want);
    expect(a === b).toBe(want);
  });
});

describe('signingKeyMatches', () => {
  it('refuses a missing, repeated, suffixed or prefixed header', () => {
    expect(signingKeyMatches(undefined, 'sk-1')).toBe(false);
    expect(signingKeyMatches(['sk-1', 'sk-1'], 'sk-1')).toBe(false);
    expect(signingKeyMatches('sk-1x', 'sk-1')).toBe(false);
    expect(signingKeyMatches('sk-', 'sk-1')).toBe(false);
    expect(signingKeyMatches('sk-1', 'sk-1')).toBe(true);
  });

  it('reads the header bytes as UTF-8, as Node hands them over as latin1', () => {
    const onTheWire = Buffer.from('clé-🔑', 'utf8').toString('latin1');
    expect(signingKeyMatches(onTheWire, 'clé-🔑')).toBe(true);
    expect(signingKeyMatches(onTheWire, 'cle-🔑')).toBe(false);
  });
});

describe('keyMatcher', () => {
  it('answers like === between the key and the header bytes read as UTF-8, for many headers against one key', () => {
    const str = fc.string({ unit: 'binary', maxLength: 20 });
    fc.assert(
      fc.property(str, fc.array(str, { maxLength: 5 }), (key, headers) => {
        const matches = keyMatcher(key);
        for (const h of [...headers, key]) {
          const onTheWire = Buffer.from(h, 'utf8');
          expect(matches(onTheWire.toString('latin1'))).toBe(onTheWire.toString('utf8') === key);
        }
      }),
    );
  });
});

describe('what decides', () => {
  /** Watch crypto.timingSafeEqual for this test (the ESM binding src/ imports follows the spy). */
  function watchTimingSafeEqual() {
    const spy = vi.spyOn(crypto, 'timingSafeEqual');
    syncBuiltinESMExports();
    onTestFinished(() => {
      spy.mockRestore();
      syncBuiltinESMExports();
    });
    return spy;
  }
  const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest();
  const KEY = 'sk-0123456789';

  it('crypto.timingSafeEqual over two 32-byte digests, the received one of the whole value, whatever its length or first difference', () => {
    const spy = watchTimingSafeEqual();
    const matches = keyMatcher(KEY);
    for (const sent of [KEY, `X${KEY.slice(1)}`, `${KEY.slice(0, -1)}X`, 'sk', '', `${KEY}-and-more`, 'x'.repeat(10_000)]) {
      spy.mockClear();
      const answer = matches(sent);
      expect(spy, sent).toHaveBeenCalledTimes(1);
      const [got, want] = spy.mock.calls[0]!;
      expect(Buffer.from(got as Uint8Array), sent).toEqual(sha256(sent));
      expect(Buffer.from(want as Uint8Array)).toEqual(sha256(KEY));
      expect(answer, sent).toBe(spy.mock.results[0]!.value);
    }
  });

  it("the answer is timingSafeEqual's: nothing before it decides", () => {
    const spy = watchTimingSafeEqual();
    const matches = keyMatcher(KEY);
    spy.mockReturnValue(true);
    expect(matches('s')).toBe(true);
    expect(matches('')).toBe(true);
    spy.mockReturnValue(false);
    expect(matches(KEY)).toBe(false);
  });
});
