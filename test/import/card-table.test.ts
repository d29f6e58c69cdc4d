// The --match-on index's storage and digest, by which a re-run sends only the rows that changed.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CardTable } from '../../src/import/card-table.js';
import { idKind, idSize } from '../../src/import/id-pack.js';
import { canonicalJson, digestOf } from '../../src/import/match-index.js';

describe('CardTable', () => {
  it('keeps every key through many growths, replaces a digest, and marks ambiguous keys', () => {
    const t = new CardTable();
    const digest = (i: number) => Buffer.alloc(8, i % 256).toString('latin1');
    for (let i = 0; i < 50_000; i++) expect(t.add(`key-${i}`, `id-${i}-é`, digest(i))).toBe('added');
    expect(t.size).toBe(50_000);
    // 50,000 entries span two entry chunks (32,768 each); every one is checked.
    const wrong: number[] = [];
    for (let i = 0; i < 50_000; i++) {
      const got = t.get(`key-${i}`);
      if (got?.id !== `id-${i}-é` || got.digest !== digest(i)) wrong.push(i);
    }
    expect(wrong).toEqual([]);
    expect(t.get('key-50000')).toBeUndefined();
    expect(t.add('key-7', 'id-7-é', digest(99))).toBe('same');
    expect(t.get('key-7')).toEqual({ id: 'id-7-é', digest: digest(99) });
    expect(t.add('key-7', 'id-8-é', digest(1))).toBe('taken');
    expect(t.get('key-7')).toEqual({ id: 'id-7-é', digest: digest(99) });
    t.markAmbiguous('key-8');
    expect(t.get('key-8')).toBeNull();
    expect(t.add('key-8', 'id-8-é', digest(8))).toBe('ambiguous');
    expect(t.holds('key-8', 'id-8-é')).toBe(false);
    expect(t.size).toBe(50_000);
  });

  it('gives back every id exactly as it came, packed as hex, as letters and digits, or kept as text', () => {
    const t = new CardTable();
    const ids = ['65a1f0c2e4b0a1b2c3d4e5f6', '65A1F0C2', 'abc', '0', 'ab', '00ff', 'card_1', 'ünï', 'JShpBxkjR2ZtXq7Lm', '', 'a-b_c', 'x y', '😀'];
    ids.forEach((id, i) => t.add(`k${i}`, id, 'ddddddd' + String(i)));
    ids.forEach((id, i) => {
      expect(t.get(`k${i}`)?.id).toBe(id);
      expect(t.holds(`k${i}`, id)).toBe(true);
      expect(t.holds(`k${i}`, `${id}2`)).toBe(false);
    });
    expect(t.holds('k0', '65a1f0c2e4b0a1b2c3d4e5f7')).toBe(false);
    expect(t.holds('k8', 'JShpBxkjR2ZtXq7Ln')).toBe(false);
    expect(t.holds('absent', 'abc')).toBe(false);
    expect(() => t.add('long', 'x'.repeat(40_000), 'dddddddd')).toThrow(/too long/);
  });

  it("packs the service's 17-character ids into 14 bytes and hex ObjectIds into 13; other text stays UTF-8", () => {
    const size = (id: string) => idSize(id, idKind(id));
    expect(size('JShpBxkjR2ZtXq7Lm')).toBe(14);
    expect(size('65a1f0c2e4b0a1b2c3d4e5f6')).toBe(13);
    expect(size('ünï')).toBe(1 + 5);
    // A length of 63 or more takes a 16-bit length after the header byte.
    expect(size('a'.repeat(63))).toBe(3 + Math.ceil((63 * 4) / 8));
    expect(size('é'.repeat(63))).toBe(3 + 126);
  });

  it('answers like a Map of key → id for any keys and ids (property)', () => {
    const id = fc.oneof(
      fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), maxLength: 80 }),
      fc.string({ unit: fc.constantFrom(...'0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-_'), maxLength: 80 }),
      fc.string({ unit: 'grapheme', maxLength: 70 }),
      fc.string({ unit: 'binary', maxLength: 20 }),
    );
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.string({ maxLength: 6 }), id), { maxLength: 300 }), (pairs) => {
        const t = new CardTable();
        const model = new Map<string, string | null>();
        for (const [key, cardId] of pairs) {
          const held = model.get(key);
          const added = t.add(key, cardId, 'dddddddd');
          expect(added).toBe(held === undefined ? 'added' : held === null ? 'ambiguous' : held === cardId ? 'same' : 'taken');
          if (held === undefined) model.set(key, cardId);
          else if (added === 'taken') {
            t.markAmbiguous(key);
            model.set(key, null);
          }
        }
        for (const [key, held] of model) {
          expect(t.get(key)?.id ?? t.get(key)).toBe(held);
          for (const [, other] of pairs) expect(t.holds(key, other)).toBe(held === other);
        }
        expect(t.size).toBe(model.size);
      }),
    );
  });

  it('keeps ids whole across id chunks: long ids that do not fit the rest of a chunk start the next one', () => {
    const t = new CardTable();
    // 300 ids of 30,000 to 32,767 bytes: ~9.4 MB, so about ten 1 MiB chunks, each ending in unused bytes.
    const id = (i: number) => `${i}:`.padEnd(30_000 + ((i * 997) % 2_767), String.fromCharCode(97 + (i % 26)));
    for (let i = 0; i < 300; i++) t.add(`k${i}`, id(i), 'dddddddd');
    for (let i = 0; i < 300; i++) expect(t.get(`k${i}`)?.id).toBe(id(i));
    t.add('hex', '65a1f0c2e4b0a1b2c3d4e5f6', 'dddddddd');
    expect(t.get('hex')?.id).toBe('65a1f0c2e4b0a1b2c3d4e5f6');
  });
});

describe('digestOf', () => {
  it('tells types apart, ignores key order, and tells an absent field from an empty one', () => {
    const f = ['Owner', 'Points'];
    expect(digestOf({ Points: 3, Owner: { a: 1, b: 2 } }, f)).toBe(digestOf({ Owner: { b: 2, a: 1 }, Points: 3 }, f));
    expect(digestOf({ Points: 3 }, f)).not.toBe(digestOf({ Points: '3' }, f));
    expect(digestOf({ Points: 3 }, f)).not.toBe(digestOf({ Points: 3, Owner: '' }, f));
    expect(canonicalJson({ b: [1, { d: 1, c: 2 }], a: null })).toBe('{"a":null,"b":[1,{"c":2,"d":1}]}');
  });
});
