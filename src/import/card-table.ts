// The --match-on index's storage: key → card `_id` + digest, in a few Buffers instead of one JS string
// pair per card, so a 1,000,000-card board of the service's 17-character ids costs ~46 MB outside the JS
// heap (20 bytes an entry, 14 an id, 6 of slots) and keeps no object or string per card.
import { hash } from 'node:crypto';
import { idEquals, idKind, idSize, readId, writeId } from './id-pack.js';

/**
 * Bytes of the key's hash kept: with 64 bits, two keys of a million-card board meet by chance with odds of
 * about 1 in 2^25 (they would read as one key held by two cards: its rows rejected, never sent to the wrong
 * card), and a row's key not on the board is taken for one that is with odds of 1 in 2^44 a row.
 */
const KEY_BYTES = 8;
/** Bytes of the field digest (match-index.ts makes it). */
export const DIGEST_BYTES = 8;
/** An entry: key hash, digest, offset of the `_id` in the id arena (u32; all ones: ambiguous key). */
const ENTRY = KEY_BYTES + DIGEST_BYTES + 4;
const AMBIGUOUS = 0xffffffff;
/** Entries per chunk (640 KiB) and bytes per id chunk (1 MiB, more than the longest id). */
const ENTRY_SHIFT = 15;
const ID_SHIFT = 20;
/** Slots in use at most: 3 in 4, so linear probing stays short. */
const LOAD = 0.75;
/**
 * Slots grow by half, not double, and a hash picks its slot by range reduction (not a mask), so slot
 * counts need not be powers of two: 1,000,000 keys take 1.5 M slots (6 MB) instead of 2^21 (8 MB).
 */
const GROWTH = 1.5;

/**
 * An open-addressing hash table from key text to (`_id`, digest). Entries and ids live in fixed-size chunks
 * that are never copied or freed while the table lives: a single growing buffer leaves its old copies for
 * the GC (and glibc) to give back late, which raises the peak of a large board's read. Only the slots are
 * rehashed.
 */
export class CardTable {
  private slots = new Uint32Array(1024); // entry number + 1; 0: empty
  private entryChunks: Buffer[] = [];
  private idChunks: Buffer[] = [];
  /** Where the next id goes: chunk number << ID_SHIFT | offset in the chunk. */
  private idsUsed = 0;
  /** Keys held. */
  size = 0;

  private static hash(key: string): string {
    // One-shot (Node 20.12+): no Hash object, whose native context lives until the GC finds it; and a
    // string, not a Buffer: a Buffer per key is a native allocation each, left to the GC and glibc to give
    // back, which raises the peak and the CPU time of a large board's read.
    return hash('sha1', key, 'binary');
  }

  /** The slot of a 32-bit hash among `n`: its share of the range (exact: h * n < 2^53). */
  private static slotOf(h: number, n: number): number {
    return Math.floor((h * n) / 0x100000000);
  }

  private chunkOf(e: number): Buffer {
    return this.entryChunks[e >>> ENTRY_SHIFT]!;
  }

  private static at(e: number): number {
    return (e & ((1 << ENTRY_SHIFT) - 1)) * ENTRY;
  }

  /** The entry number of `keyHash`, or the slot where it would go (negative: -(slot + 1)). */
  private find(keyHash: string): number {
    const slotCount = this.slots.length;
    // The first 4 bytes little-endian, as grow() reads them from an entry.
    const start = (keyHash.charCodeAt(0) | (keyHash.charCodeAt(1) << 8) | (keyHash.charCodeAt(2) << 16) | (keyHash.charCodeAt(3) << 24)) >>> 0;
    for (let slot = CardTable.slotOf(start, slotCount); ; slot = slot + 1 === slotCount ? 0 : slot + 1) {
      const e = this.slots[slot]!;
      if (e === 0) return -(slot + 1);
      if (this.keyIs(e - 1, keyHash)) return e - 1;
    }
  }

  private keyIs(entry: number, keyHash: string): boolean {
    const chunk = this.chunkOf(entry);
    const at = CardTable.at(entry);
    for (let i = 0; i < KEY_BYTES; i++) if (chunk[at + i] !== keyHash.charCodeAt(i)) return false;
    return true;
  }

  /** Where the id of entry `entry` is: its chunk and offset, or undefined for an ambiguous key. */
  private idOf(entry: number): [Buffer, number] | undefined {
    const idAt = this.chunkOf(entry).readUInt32LE(CardTable.at(entry) + KEY_BYTES + DIGEST_BYTES);
    if (idAt === AMBIGUOUS) return undefined;
    return [this.idChunks[idAt >>> ID_SHIFT]!, idAt & ((1 << ID_SHIFT) - 1)];
  }

  private grow(): void {
    const slotCount = Math.floor(this.slots.length * GROWTH);
    this.slots = new Uint32Array(slotCount);
    for (let entry = 0; entry < this.size; entry++) {
      let s = CardTable.slotOf(this.chunkOf(entry).readUInt32LE(CardTable.at(entry)), slotCount);
      while (this.slots[s] !== 0) s = s + 1 === slotCount ? 0 : s + 1;
      this.slots[s] = entry + 1;
    }
  }

  /** The card of `key`: `null` when the key is held by several cards. */
  get(key: string): { id: string; digest: string } | null | undefined {
    const entry = this.find(CardTable.hash(key));
    if (entry < 0) return undefined;
    const where = this.idOf(entry);
    if (where === undefined) return null;
    const at = CardTable.at(entry) + KEY_BYTES;
    return { id: readId(...where), digest: this.chunkOf(entry).toString('latin1', at, at + DIGEST_BYTES) };
  }

  /** Whether `key` names the card `id` (one card holds it, and it is this one); no string is made. */
  holds(key: string, id: string): boolean {
    const e = this.find(CardTable.hash(key));
    const where = e < 0 ? undefined : this.idOf(e);
    return where !== undefined && idEquals(where[0], where[1], id);
  }

  /**
   * Give `key` the card `id` and its digest: `added` when the key was not held; `same` when it names that card
   * already (its digest is replaced: the later view is the newer); `taken` when it names another card and
   * `ambiguous` when several (nothing changes: the caller marks the key).
   */
  add(key: string, id: string, digest: string): 'added' | 'same' | 'taken' | 'ambiguous' {
    const keyHash = CardTable.hash(key);
    let entry = this.find(keyHash);
    if (entry >= 0) {
      const where = this.idOf(entry);
      if (where === undefined) return 'ambiguous';
      if (!idEquals(where[0], where[1], id)) return 'taken';
      this.chunkOf(entry).write(digest, CardTable.at(entry) + KEY_BYTES, DIGEST_BYTES, 'latin1');
      return 'same';
    }
    if (this.size + 1 > this.slots.length * LOAD) {
      // Full enough: store the entry, then rehash every entry (this one included) into more slots.
      this.addEntry(keyHash);
      this.grow();
      entry = this.size - 1;
    } else {
      this.slots[-entry - 1] = this.size + 1;
      entry = this.addEntry(keyHash);
    }
    const chunk = this.chunkOf(entry);
    chunk.writeUInt32LE(this.addId(id), CardTable.at(entry) + KEY_BYTES + DIGEST_BYTES);
    chunk.write(digest, CardTable.at(entry) + KEY_BYTES, DIGEST_BYTES, 'latin1');
    return 'added';
  }

  /** Mark a key as held by several cards (its card can no longer be named). */
  markAmbiguous(key: string): void {
    const e = this.find(CardTable.hash(key));
    if (e >= 0) this.chunkOf(e).writeUInt32LE(AMBIGUOUS, CardTable.at(e) + KEY_BYTES + DIGEST_BYTES);
  }

  private addEntry(keyHash: string): number {
    const entry = this.size++;
    // Not zero-filled: every byte of an entry is written before it is read, so untouched pages cost nothing.
    if (entry >>> ENTRY_SHIFT === this.entryChunks.length) this.entryChunks.push(Buffer.allocUnsafeSlow(ENTRY << ENTRY_SHIFT));
    // grow() rehashes from the first 4 bytes kept, as find() probes from the first 4 of the hash.
    this.chunkOf(entry).write(keyHash, CardTable.at(entry), KEY_BYTES, 'latin1');
    return entry;
  }

  private addId(id: string): number {
    const kind = idKind(id);
    const bytes = idSize(id, kind);
    const size = 1 << ID_SHIFT;
    if (this.idChunks.length === 0 || (this.idsUsed & (size - 1)) + bytes > size) {
      // An id never straddles two chunks: the rest of a full chunk stays unused (untouched, not resident).
      this.idsUsed = this.idChunks.length * size;
      this.idChunks.push(Buffer.allocUnsafeSlow(size));
    }
    const at = this.idsUsed;
    writeId(this.idChunks[at >>> ID_SHIFT]!, at & (size - 1), id, kind);
    this.idsUsed += bytes;
    return at;
  }
}
