// The --match-on index's storage: key → card `_id` + digest, in a few Buffers instead of one JS string
// pair per card, so a 1,000,000-card board costs ~50 MB outside the JS heap and makes no garbage to collect.
import { hash } from 'node:crypto';

/** Bytes of the key's hash kept: with 96 bits, two keys of a million-card board never meet by chance. */
const KEY_BYTES = 12;
/** Bytes of the field digest (match-index.ts makes it). */
export const DIGEST_BYTES = 8;
/** An entry: key hash, digest, offset of the `_id` in the id arena (u32; all ones: ambiguous key). */
const ENTRY = KEY_BYTES + DIGEST_BYTES + 4;
const AMBIGUOUS = 0xffffffff;
/** Flag of an id's length word: the id was lowercase hex, stored as its bytes. */
const HEX = 0x8000;
const MAX_ID_BYTES = HEX - 1;
/** Entries per chunk (768 KiB) and bytes per id chunk (1 MiB, more than the longest id). */
const ENTRY_SHIFT = 15;
const ID_SHIFT = 20;
/** Slots in use at most: 3 in 4 (linear probing stays short), so 1,000,000 keys take 2^21 slots, 8 MiB. */
const LOAD = 0.75;

/**
 * An open-addressing hash table from key text to (`_id`, digest). Entries and ids live in fixed-size chunks
 * that are never copied or freed while the table lives: growing a single buffer left its old copies for the
 * GC (and glibc) to give back late, ~20 MB of a 1,000,000-card read's peak. Only the slots are rehashed.
 */
export class CardTable {
  private slots = new Uint32Array(1024); // entry number + 1; 0: empty
  private entryChunks: Buffer[] = [];
  private idChunks: Buffer[] = [];
  /** Where the next id goes: chunk number << ID_SHIFT | offset in the chunk. */
  private idsUsed = 0;
  /** Keys held. */
  size = 0;

  private static hash(key: string): Buffer {
    // One-shot (Node 20.12+): no Hash object, whose native context lives until the GC finds it.
    return hash('sha1', key, 'buffer');
  }

  private chunkOf(e: number): Buffer {
    return this.entryChunks[e >>> ENTRY_SHIFT]!;
  }

  private static at(e: number): number {
    return (e & ((1 << ENTRY_SHIFT) - 1)) * ENTRY;
  }

  /** The entry number of `h`, or the slot where it would go (negative: -(slot + 1)). */
  private find(h: Buffer): number {
    const mask = this.slots.length - 1;
    for (let s = h.readUInt32LE(0) & mask; ; s = (s + 1) & mask) {
      const e = this.slots[s]!;
      if (e === 0) return -(s + 1);
      const at = CardTable.at(e - 1);
      if (this.chunkOf(e - 1).compare(h, 0, KEY_BYTES, at, at + KEY_BYTES) === 0) return e - 1;
    }
  }

  private grow(): void {
    this.slots = new Uint32Array(this.slots.length * 2);
    const mask = this.slots.length - 1;
    for (let e = 0; e < this.size; e++) {
      let s = this.chunkOf(e).readUInt32LE(CardTable.at(e)) & mask;
      while (this.slots[s] !== 0) s = (s + 1) & mask;
      this.slots[s] = e + 1;
    }
  }

  /** The card of `key`: `null` when the key is held by several cards. */
  get(key: string): { id: string; digest: string } | null | undefined {
    const e = this.find(CardTable.hash(key));
    if (e < 0) return undefined;
    const chunk = this.chunkOf(e);
    const at = CardTable.at(e);
    const idAt = chunk.readUInt32LE(at + KEY_BYTES + DIGEST_BYTES);
    if (idAt === AMBIGUOUS) return null;
    const ids = this.idChunks[idAt >>> ID_SHIFT]!;
    const from = idAt & ((1 << ID_SHIFT) - 1);
    const head = ids.readUInt16LE(from);
    const len = head & ~HEX;
    return {
      id: ids.toString(head & HEX ? 'hex' : 'utf8', from + 2, from + 2 + len),
      digest: chunk.toString('latin1', at + KEY_BYTES, at + KEY_BYTES + DIGEST_BYTES),
    };
  }

  /** Set the card of a key not held yet, or replace the digest of the same card. */
  set(key: string, id: string, digest: string): void {
    const h = CardTable.hash(key);
    let e = this.find(h);
    if (e < 0) {
      if (this.size + 1 > this.slots.length * LOAD) {
        // Full enough: store the entry, then rehash every entry (this one included) into twice the slots.
        this.addEntry(h);
        this.grow();
        e = this.size - 1;
      } else {
        this.slots[-e - 1] = this.size + 1;
        e = this.addEntry(h);
      }
      this.chunkOf(e).writeUInt32LE(this.addId(id), CardTable.at(e) + KEY_BYTES + DIGEST_BYTES);
    }
    this.chunkOf(e).write(digest, CardTable.at(e) + KEY_BYTES, DIGEST_BYTES, 'latin1');
  }

  /** Mark a key as held by several cards (its card can no longer be named). */
  markAmbiguous(key: string): void {
    const e = this.find(CardTable.hash(key));
    if (e >= 0) this.chunkOf(e).writeUInt32LE(AMBIGUOUS, CardTable.at(e) + KEY_BYTES + DIGEST_BYTES);
  }

  private addEntry(h: Buffer): number {
    const e = this.size++;
    // Not zero-filled: every byte of an entry is written before it is read, so untouched pages cost nothing.
    if (e >>> ENTRY_SHIFT === this.entryChunks.length) this.entryChunks.push(Buffer.allocUnsafeSlow(ENTRY << ENTRY_SHIFT));
    // grow() rehashes from the first 4 bytes kept, as find() probes from the first 4 of the hash.
    h.copy(this.chunkOf(e), CardTable.at(e), 0, KEY_BYTES);
    return e;
  }

  private addId(id: string): number {
    // Ids that are lowercase hex (the service's ObjectIds) are kept as bytes: half the size.
    const hex = id.length % 2 === 0 && id.length > 0 && /^[0-9a-f]+$/.test(id);
    const len = hex ? id.length / 2 : Buffer.byteLength(id);
    if (len > MAX_ID_BYTES) throw new Error(`a card _id of ${len} bytes is too long to index`);
    const size = 1 << ID_SHIFT;
    if (this.idChunks.length === 0 || (this.idsUsed & (size - 1)) + 2 + len > size) {
      // An id never straddles two chunks: the rest of a full chunk stays unused (untouched, not resident).
      this.idsUsed = this.idChunks.length * size;
      this.idChunks.push(Buffer.allocUnsafeSlow(size));
    }
    const at = this.idsUsed;
    const ids = this.idChunks[at >>> ID_SHIFT]!;
    const from = at & (size - 1);
    ids.writeUInt16LE(hex ? len | HEX : len, from);
    ids.write(id, from + 2, len, hex ? 'hex' : 'utf8');
    this.idsUsed += 2 + len;
    return at;
  }
}
