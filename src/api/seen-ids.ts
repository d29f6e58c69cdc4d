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
    let fnv = 0x811c9dc5;
    let mulXor = 0x9747b28c ^ id.length;
    for (let i = 0; i < id.length; i++) {
      const unit = id.charCodeAt(i);
      fnv = Math.imul(fnv ^ unit, 0x01000193);
      mulXor = Math.imul(mulXor ^ unit, 0x5bd1e995);
      mulXor ^= mulXor >>> 13;
    }
    this.fa = SeenIds.mix(fnv) >>> 0;
    this.fb = (SeenIds.mix(mulXor) | 1) >>> 0;
  }

  private static mix(h: number): number {
    h ^= h >>> 16;
    h = Math.imul(h, 0x85ebca6b);
    h ^= h >>> 13;
    h = Math.imul(h, 0xc2b2ae35);
    return h ^ (h >>> 16);
  }

  /** True when (first, second) is there; else adds it when `add` and returns false. */
  private insert(first: number, second: number, add: boolean): boolean {
    const shard = second >>> 26; // the top bits pick the shard, the low bits of `first` the slot: independent
    const slots = this.shards[shard]!;
    const mask = slots.length / 2 - 1;
    for (let slot = first & mask; ; slot = (slot + 1) & mask) {
      const slotFirst = slots[2 * slot]!;
      const slotSecond = slots[2 * slot + 1]!;
      if (slotSecond === 0) {
        if (!add) return false;
        slots[2 * slot] = first;
        slots[2 * slot + 1] = second;
        this.size++;
        if (++this.counts[shard]! > (slots.length / 2) * LOAD) this.grow(shard);
        return false;
      }
      if (slotFirst === first && slotSecond === second) return true;
    }
  }

  private grow(shard: number): void {
    const old = this.shards[shard]!;
    const slots = new Uint32Array(old.length * 2);
    const mask = slots.length / 2 - 1;
    for (let i = 0; i < old.length; i += 2) {
      if (old[i + 1] === 0) continue;
      let slot = old[i]! & mask;
      while (slots[2 * slot + 1] !== 0) slot = (slot + 1) & mask;
      slots[2 * slot] = old[i]!;
      slots[2 * slot + 1] = old[i + 1]!;
    }
    this.shards[shard] = slots;
  }
}
