// The card ids a listing has seen, so that a page made only of cards seen on earlier pages (a server
// repeating a page) ends the listing instead of looping for ever. A whole-board read may pass a million
// cards: each id is kept as a 64-bit fingerprint in typed arrays (8 bytes a slot, 16 MB of slots for
// 1,000,000 ids), not as a string in a Set (~70 bytes each).

/** Slots in use at most: 3 in 4, so linear probing stays short. */
const LOAD = 0.75;
/**
 * Tables, each growing on its own: a single table holds its old copy beside the new one while it grows,
 * 8 MB more at the peak for a million ids; a shard's copy is 1/64 of that.
 */
const SHARDS = 64;

/** A set of string ids by 64-bit fingerprint: two ids meet by chance with odds about n / 2^64. */
export class SeenIds {
  /** Per shard, pairs of 32-bit halves; (0, 0) is an empty slot (a fingerprint's second half is never 0). */
  private shards = Array.from({ length: SHARDS }, () => new Uint32Array(2 * 16));
  private counts = new Uint32Array(SHARDS);
  /** Ids held. */
  size = 0;

  /** Add `id`; true when it was already there. */
  add(id: string): boolean {
    this.fingerprint(id);
    return this.insert(this.fa, this.fb, true);
  }

  /** Whether `id` is there (nothing added). */
  has(id: string): boolean {
    this.fingerprint(id);
    return this.insert(this.fa, this.fb, false);
  }

  /** The halves of the last fingerprint made (fields, not a tuple: no array per id). */
  private fa = 0;
  private fb = 0;

  private fingerprint(id: string): void {
    // Two independent 32-bit hashes of the UTF-16 units (FNV-1a and a multiply-xorshift), each finalised
    // with murmur3's mixer: fast in JS, no Buffer or string made per id.
    let a = 0x811c9dc5;
    let b = 0x9747b28c ^ id.length;
    for (let i = 0; i < id.length; i++) {
      const c = id.charCodeAt(i);
      a = Math.imul(a ^ c, 0x01000193);
      b = Math.imul(b ^ c, 0x5bd1e995);
      b ^= b >>> 13;
    }
    this.fa = SeenIds.mix(a) >>> 0;
    this.fb = (SeenIds.mix(b) | 1) >>> 0;
  }

  private static mix(h: number): number {
    h ^= h >>> 16;
    h = Math.imul(h, 0x85ebca6b);
    h ^= h >>> 13;
    h = Math.imul(h, 0xc2b2ae35);
    return h ^ (h >>> 16);
  }

  /** True when (a, b) is there; else adds it when `add` and returns false. */
  private insert(a: number, b: number, add: boolean): boolean {
    const shard = b >>> 26; // the top bits pick the shard, the low bits of `a` the slot: independent
    const slots = this.shards[shard]!;
    const mask = slots.length / 2 - 1;
    for (let s = a & mask; ; s = (s + 1) & mask) {
      const x = slots[2 * s]!;
      const y = slots[2 * s + 1]!;
      if (y === 0) {
        if (!add) return false;
        slots[2 * s] = a;
        slots[2 * s + 1] = b;
        this.size++;
        if (++this.counts[shard]! > (slots.length / 2) * LOAD) this.grow(shard);
        return false;
      }
      if (x === a && y === b) return true;
    }
  }

  private grow(shard: number): void {
    const old = this.shards[shard]!;
    const slots = new Uint32Array(old.length * 2);
    const mask = slots.length / 2 - 1;
    for (let i = 0; i < old.length; i += 2) {
      if (old[i + 1] === 0) continue;
      let s = old[i]! & mask;
      while (slots[2 * s + 1] !== 0) s = (s + 1) & mask;
      slots[2 * s] = old[i]!;
      slots[2 * s + 1] = old[i + 1]!;
    }
    this.shards[shard] = slots;
  }
}
