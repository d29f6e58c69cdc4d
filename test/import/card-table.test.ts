// The --match-on index's storage and digest (issue 10, point 2).
import { describe, expect, it } from 'vitest';
import { CardTable } from '../../src/import/card-table.js';
import { canonicalJson, digestOf } from '../../src/import/match-index.js';

describe('CardTable', () => {
  it('keeps every key through many growths, replaces a digest, and marks ambiguous keys', () => {
    const t = new CardTable();
    const digest = (i: number) => Buffer.alloc(8, i % 256).toString('latin1');
    for (let i = 0; i < 50_000; i++) t.set(`key-${i}`, `id-${i}-é`, digest(i));
    expect(t.size).toBe(50_000);
    // 50,000 entries span two entry chunks (32,768 each); every one is checked.
    const wrong: number[] = [];
    for (let i = 0; i < 50_000; i++) {
      const got = t.get(`key-${i}`);
      if (got?.id !== `id-${i}-é` || got.digest !== digest(i)) wrong.push(i);
    }
    expect(wrong).toEqual([]);
    expect(t.get('key-50000')).toBeUndefined();
    t.set('key-7', 'id-7-é', digest(99));
    expect(t.get('key-7')).toEqual({ id: 'id-7-é', digest: digest(99) });
    t.markAmbiguous('key-8');
    expect(t.get('key-8')).toBeNull();
    expect(t.size).toBe(50_000);
  });

  it('gives back every id exactly as it came, whether it was kept as hex bytes or as text', () => {
    const t = new CardTable();
    const ids = ['65a1f0c2e4b0a1b2c3d4e5f6', '65A1F0C2', 'abc', '0', 'ab', '00ff', 'card_1', 'ünï'];
    ids.forEach((id, i) => t.set(`k${i}`, id, 'ddddddd' + String(i)));
    ids.forEach((id, i) => expect(t.get(`k${i}`)?.id).toBe(id));
    expect(() => t.set('long', 'x'.repeat(40_000), 'dddddddd')).toThrow(/too long/);
  });

  it('keeps ids whole across id chunks: long ids that do not fit the rest of a chunk start the next one', () => {
    const t = new CardTable();
    // 300 ids of 30,000 to 32,767 bytes: ~9.4 MB, so about ten 1 MiB chunks, each ending in unused bytes.
    const id = (i: number) => `${i}:`.padEnd(30_000 + ((i * 997) % 2_767), String.fromCharCode(97 + (i % 26)));
    for (let i = 0; i < 300; i++) t.set(`k${i}`, id(i), 'dddddddd');
    for (let i = 0; i < 300; i++) expect(t.get(`k${i}`)?.id).toBe(id(i));
    t.set('hex', '65a1f0c2e4b0a1b2c3d4e5f6', 'dddddddd');
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
