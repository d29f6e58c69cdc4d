// Card `_id`s packed into bytes for the --match-on index (card-table.ts). The service's ids are 17 characters
// of digits and letters (`JShpBxkjR2ZtXq7Lm`), another server's may be hex ObjectIds or any text: an id whose
// characters all belong to a small alphabet keeps each character's place in it (4 bits for lowercase hex, 6 for
// digits, letters, `-` and `_`), any other id its UTF-8 bytes. 17 letters take 14 bytes with the header.
// Hand-written: Buffer's base64 and hex decoders drop a last odd character, and would make a Buffer per id.

const HEX = '0123456789abcdef';
const WORD = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-_';
/** The kinds of packing, in a header's top 2 bits. */
const HEX_KIND = 0;
const WORD_KIND = 1;
const TEXT_KIND = 2;
/** Length field of a one-byte header; this value says a 16-bit length follows. */
const LONG = 63;
/** The longest id kept, in UTF-8 bytes (packed kinds are ASCII: characters and bytes are the same count). */
const MAX_ID_BYTES = 0x7fff;

/** Character code → place in the alphabet, -1 when not in it (codes from 128 are in neither). */
function places(alphabet: string): Int8Array {
  const t = new Int8Array(128).fill(-1);
  for (let i = 0; i < alphabet.length; i++) t[alphabet.charCodeAt(i)] = i;
  return t;
}
const HEX_PLACE = places(HEX);
const WORD_PLACE = places(WORD);
const ALPHABETS = [HEX, WORD];
const PLACES = [HEX_PLACE, WORD_PLACE];
const BITS = [4, 6];

/** How `id` is packed: the smallest alphabet holding all its characters, else its UTF-8 text. */
export function idKind(id: string): number {
  let hex = id.length > 0;
  for (let i = 0; i < id.length; i++) {
    const c = id.charCodeAt(i);
    if (c >= 128 || WORD_PLACE[c]! < 0) return TEXT_KIND;
    if (HEX_PLACE[c]! < 0) hex = false;
  }
  return hex ? HEX_KIND : WORD_KIND;
}

/** Bytes `id` takes packed as `kind`, header included; throws past MAX_ID_BYTES. */
export function idSize(id: string, kind: number): number {
  const len = kind === TEXT_KIND ? Buffer.byteLength(id) : id.length;
  if (len > MAX_ID_BYTES) throw new Error(`a card _id of ${len} bytes is too long to index`);
  const body = kind === TEXT_KIND ? len : Math.ceil((len * BITS[kind]!) / 8);
  return (len < LONG ? 1 : 3) + body;
}

/** Write `id` packed as `kind` at `at` (idSize bytes must be free there). */
export function writeId(buf: Buffer, at: number, id: string, kind: number): void {
  const len = kind === TEXT_KIND ? Buffer.byteLength(id) : id.length;
  let pos = at;
  buf[pos++] = (kind << 6) | Math.min(len, LONG);
  if (len >= LONG) pos = buf.writeUInt16LE(len, pos);
  if (kind === TEXT_KIND) {
    buf.write(id, pos, len, 'utf8');
    return;
  }
  const bits = BITS[kind]!;
  const place = PLACES[kind]!;
  // The bits packed but not yet written: the low `accBits` bits of `acc`.
  let acc = 0;
  let accBits = 0;
  for (let i = 0; i < len; i++) {
    acc = (acc << bits) | place[id.charCodeAt(i)]!;
    accBits += bits;
    if (accBits >= 8) {
      accBits -= 8;
      buf[pos++] = acc >>> accBits;
      acc &= (1 << accBits) - 1;
    }
  }
  if (accBits > 0) buf[pos] = acc << (8 - accBits);
}

/** The kind, the length (characters or UTF-8 bytes) and where the packed body starts, of the id at `at`. */
function header(buf: Buffer, at: number): [kind: number, len: number, from: number] {
  const h = buf[at]!;
  const short = h & LONG;
  return short < LONG ? [h >>> 6, short, at + 1] : [h >>> 6, buf.readUInt16LE(at + 1), at + 3];
}

/** Calls `each` with the code of every character of the packed id (kinds other than text). */
function decode(buf: Buffer, from: number, len: number, kind: number, each: (code: number, i: number) => boolean): boolean {
  const bits = BITS[kind]!;
  const alphabet = ALPHABETS[kind]!;
  let pos = from;
  // The bits read but not yet decoded: the low `accBits` bits of `acc`.
  let acc = 0;
  let accBits = 0;
  for (let i = 0; i < len; i++) {
    if (accBits < bits) {
      acc = (acc << 8) | buf[pos++]!;
      accBits += 8;
    }
    accBits -= bits;
    if (!each(alphabet.charCodeAt(acc >>> accBits), i)) return false;
    acc &= (1 << accBits) - 1;
  }
  return true;
}

/** The id written at `at`, as it was given. */
export function readId(buf: Buffer, at: number): string {
  const [kind, len, from] = header(buf, at);
  if (kind === TEXT_KIND) return buf.toString('utf8', from, from + len);
  const codes = new Array<number>(len);
  decode(buf, from, len, kind, (code, i) => {
    codes[i] = code;
    return true;
  });
  let out = '';
  // In slices: an argument list as long as the longest id would be close to V8's limit.
  for (let i = 0; i < len; i += 4096) out += String.fromCharCode(...codes.slice(i, i + 4096));
  return out;
}

/** Whether the id written at `at` is `id` (for a packed id, without making its string). */
export function idEquals(buf: Buffer, at: number, id: string): boolean {
  const [kind, len, from] = header(buf, at);
  if (kind === TEXT_KIND) return len === Buffer.byteLength(id) && buf.toString('utf8', from, from + len) === id;
  return len === id.length && decode(buf, from, len, kind, (code, i) => code === id.charCodeAt(i));
}
