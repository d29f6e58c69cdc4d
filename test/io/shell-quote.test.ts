import { spawnSync } from 'node:child_process';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { shellQuote } from '../../src/import/mapping.js';
import { HOSTILE } from '../helpers/hostile-server.js';

/** What a real bash makes of the quoted word: the value it passes as an argument. */
function bashArg(word: string): string {
  // \u escapes need a UTF-8 locale in bash (a terminal's usual one).
  const r = spawnSync('bash', ['-c', `printf %s ${word}`], { encoding: 'utf8', env: { ...process.env, LC_ALL: 'C.UTF-8' } });
  expect(r.status).toBe(0);
  return r.stdout;
}

const RAW = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]|(?!\u200d)\p{Cf}/u;

describe('shellQuote (suggested --map and re-run commands)', () => {
  it('writes hostile names as one safe $\'…\' word that bash reads back exactly', () => {
    for (const value of [...Object.values(HOSTILE), "it's a \\x9b \\e", 'tag\u{e0001}', `Name=${HOSTILE.lf}`]) {
      const word = shellQuote(value);
      expect(word).not.toMatch(RAW);
      expect(bashArg(word)).toBe(value);
    }
  });
  it('keeps plain words bare and other words in single quotes', () => {
    expect(shellQuote('Name=Fix')).toBe('Name=Fix');
    expect(shellQuote("Bob's file.csv")).toBe("'Bob'\\''s file.csv'");
  });
  it('round-trips arbitrary text through bash', () => {
    // No NUL: no shell argument can hold one. Lone surrogates have no UTF-8 form either.
    const text = fc.string({ unit: 'grapheme', maxLength: 12 }).filter((s) => !s.includes('\u0000'));
    const hostile = fc.array(fc.constantFrom('\u001b', '\r', '\n', '\t', '\u0007', '\u009b', '\u202e', '\u2028', "'", '\\', '"', '$', '`', ' ', 'a', '日'), { maxLength: 12 }).map((a) => a.join(''));
    fc.assert(
      fc.property(fc.oneof(text, hostile), (value) => {
        const word = shellQuote(value);
        expect(word).not.toMatch(RAW);
        expect(bashArg(word)).toBe(value);
      }),
      { numRuns: 60 },
    );
  });
});
