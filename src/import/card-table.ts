// The --match-on index's storage: key → card `_id` + digest, in a few Buffers instead of one JS string
// pair per card, so a 1,000,000-card board costs ~50 MB outside the JS heap and makes no garbage to collect.
import { createHash } from 'node:crypto';

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

/** An open-addressing hash table from key text to (`_id`, digest). */
export class CardTable {
  private slots = new Uint32Array(1024); // entry number + 1; 0: empty
  private entries: Buffer = Buffer.alloc(512 * ENTRY);
  private ids: Buffer = Buffer.alloc(64 * 1024);
  private idsUsed = 0;
  /** Keys held. */
  size = 0;

  private static hash(key: string): Buffer {
    return createHash('sha1').update(key).digest();
  }

  /** The entry number of `h`, or the slot where it would go (negative: -(slot + 1)). */
  private find(h: Buffer): number {
    const mask = this.slots.length - 1;
    for (let s = h.readUInt32LE(0) & mask; ; s = (s + 1) & mask) {
      const e = this.slots[s]!;
      if (e === 0) return -(s + 1);
      if (this.entries.compare(h, 0, KEY_BYTES, (e - 1) * ENTRY, (e - 1) * ENTRY + KEY_BYTES) === 0) return e - 1;
    }
  }

  private grow(): void {
    const old = this.slots;
    this.slots = new Uint32Array(old.length * 2);
    const mask = this.slots.length - 1;
    for (let e = 0; e < this.size; e++) {
      let s = this.entries.readUInt32LE(e * ENTRY) & mask;
      while (this.slots[s] !== 0) s = (s + 1) & mask;
      this.slots[s] = e + 1;
    }
  }

  /** The card of `key`: `null` when the key is held by several cards. */
  get(key: string): { id: string; digest: string } | null | undefined {
    const e = this.find(CardTable.hash(key));
    if (e < 0) return undefined;
    const at = e * ENTRY;
    const idAt = this.entries.readUInt32LE(at + KEY_BYTES + DIGEST_BYTES);
    if (idAt === AMBIGUOUS) return null;
    const head = this.ids.readUInt16LE(idAt);
    const len = head & ~HEX;
    return {
      id: this.ids.toString(head & HEX ? 'hex' : 'utf8', idAt + 2, idAt + 2 + len),
      digest: this.entries.toString('latin1', at + KEY_BYTES, at + KEY_BYTES + DIGEST_BYTES),
    };
  }

  /** Set the card of a key not held yet, or replace the digest of the same card. */
  set(key: string, id: string, digest: string): void {
    const h = CardTable.hash(key);
    let e = this.find(h);
    if (e < 0) {
      if ((this.size + 1) * 2 > this.slots.length) {
        // Half full: store the entry, then rehash every entry (this one included) into twice the slots.
        this.addEntry(h);
        this.grow();
        e = this.size - 1;
      } else {
        this.slots[-e - 1] = this.size + 1;
        e = this.addEntry(h);
      }
      this.entries.writeUInt32LE(this.addId(id), e * ENTRY + KEY_BYTES + DIGEST_BYTES);
    }
    this.entries.write(digest, e * ENTRY + KEY_BYTES, DIGEST_BYTES, 'latin1');
  }

  /** Mark a key as held by several cards (its card can no longer be named). */
  markAmbiguous(key: string): void {
    const e = this.find(CardTable.hash(key));
    if (e >= 0) this.entries.writeUInt32LE(AMBIGUOUS, e * ENTRY + KEY_BYTES + DIGEST_BYTES);
  }

  private addEntry(h: Buffer): number {
    if ((this.size + 1) * ENTRY > this.entries.length) this.entries = grown(this.entries, this.size * ENTRY);
    const e = this.size++;
    // grow() rehashes from the first 4 bytes kept, as find() probes from the first 4 of the hash.
    h.copy(this.entries, e * ENTRY, 0, KEY_BYTES);
    return e;
  }

  private addId(id: string): number {
    // Ids that are lowercase hex (the service's ObjectIds) are kept as bytes: half the size.
    const hex = id.length % 2 === 0 && id.length > 0 && /^[0-9a-f]+$/.test(id);
    const len = hex ? id.length / 2 : Buffer.byteLength(id);
    if (len > MAX_ID_BYTES) throw new Error(`a card _id of ${len} bytes is too long to index`);
    if (this.idsUsed + 2 + len > this.ids.length) this.ids = grown(this.ids, this.idsUsed, 2 + len);
    const at = this.idsUsed;
    this.ids.writeUInt16LE(hex ? len | HEX : len, at);
    this.ids.write(id, at + 2, len, hex ? 'hex' : 'utf8');
    this.idsUsed += 2 + len;
    return at;
  }
}

/**
 * A copy of `buf`'s first `used` bytes in a buffer 1.5 times larger (and at least `need` more). Not
 * zero-filled (every byte is written before it is read): the unused tail then costs no resident memory.
 */
function grown(buf: Buffer, used: number, need = 0): Buffer {
  const next = Buffer.allocUnsafeSlow(Math.max(Math.ceil(buf.length * 1.5), used + need));
  buf.copy(next, 0, 0, used);
  return next;
}
