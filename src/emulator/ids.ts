import { createHash, randomBytes } from 'node:crypto';

/**
 * The characters of the service's ids (`JShpBxEFgRmZnivTf`): Meteor's Random.id alphabet, digits and
 * letters without the ones easily mistaken for another (0 1 I O U V l).
 */
export const ID_ALPHABET = '23456789ABCDEFGHJKLMNPQRSTWXYZabcdefghijkmnopqrstuvwxyz';
/** Length of a service id. */
const ID_LENGTH = 17;

/** The largest multiple of the alphabet's size that fits a byte: bytes at or above it are dropped (no modulo bias). */
const UNBIASED = 256 - (256 % ID_ALPHABET.length);

/** A source of uniformly random bytes, `n` at a time. */
type Bytes = (n: number) => Buffer;

/** `length` characters of ID_ALPHABET drawn from `bytes` by rejection sampling. */
function draw(bytes: Bytes, length: number): string {
  let out = '';
  while (out.length < length) {
    for (const b of bytes(length - out.length + 4)) {
      if (b < UNBIASED && out.length < length) out += ID_ALPHABET[b % ID_ALPHABET.length];
    }
  }
  return out;
}

/** Random bytes from the operating system's CSPRNG, taken from a pool refilled 4 KiB at a time. */
function cryptoBytes(): Bytes {
  let pool = Buffer.alloc(0);
  let at = 0;
  return (count) => {
    if (at + count > pool.length) {
      pool = randomBytes(Math.max(4096, count));
      at = 0;
    }
    at += count;
    return pool.subarray(at - count, at);
  };
}

/** A deterministic byte stream: sha256(seed, label, block counter) blocks, so one seed gives one sequence per label. */
function seededBytes(seed: string, label: string): Bytes {
  let block = 0;
  let buf = Buffer.alloc(0);
  return (count) => {
    while (buf.length < count) {
      const next = createHash('sha256').update(`cardboard-emulator\0${label}\0${seed}\0${block++}`).digest();
      buf = Buffer.concat([buf, next]);
    }
    const out = buf.subarray(0, count);
    buf = buf.subarray(count);
    return out;
  };
}

/**
 * Makes service-shaped ids (17 characters of ID_ALPHABET) for cards and comments: from the CSPRNG, or,
 * given a seed, the same sequence for the same seed (a reproducible session).
 */
export function idSource(seed?: string): () => string {
  const bytes = seed === undefined ? cryptoBytes() : seededBytes(seed, 'ids');
  return () => draw(bytes, ID_LENGTH);
}

/** `length` characters of ID_ALPHABET derived from `seed` and `label` (the same every time). */
export function derivedId(seed: string, label: string, length = ID_LENGTH): string {
  return draw(seededBytes(seed, label), length);
}

/** `length` characters of ID_ALPHABET from the CSPRNG. */
export function randomId(length = ID_LENGTH): string {
  return draw((n) => randomBytes(n), length);
}
