import { hash, timingSafeEqual } from 'node:crypto';

/** The sha256 of a string's UTF-16 code units, with the number of bytes hashed. */
interface Digest {
  sha256: Buffer;
  length: number;
}

/*
 * The UTF-16 code units are hashed (not UTF-8) because UTF-8 maps every lone surrogate to U+FFFD, which
 * would make two different strings compare equal. crypto.hash is the one-shot form: about half the cost of
 * createHash().update().digest(), which builds a Hash object per call.
 */
function digest(text: string): Digest {
  const bytes = Buffer.from(text, 'utf16le');
  return { sha256: hash('sha256', bytes, 'buffer'), length: bytes.length };
}

/**
 * Whether two digests are of the same string, in constant time: the comparison never branches on where the
 * strings differ or on their lengths. The final length check turns "same digest" into "same string" without
 * relying on the absence of sha256 collisions.
 */
function sameDigest(a: Digest, b: Digest): boolean {
  return timingSafeEqual(a.sha256, b.sha256) && a.length === b.length;
}

/**
 * A check of received x-signingKey header values against the expected key (spec 6), which is hashed once
 * here rather than on every delivery. Node hands header values over as latin1 text of the raw bytes; they
 * are read back as UTF-8 so a key with non-ASCII characters, sent as UTF-8, matches the key as the user
 * typed it. A missing or repeated header never matches.
 */
export function keyMatcher(expected: string): (header: string | string[] | undefined) => boolean {
  const want = digest(expected);
  return (header) => typeof header === 'string' && sameDigest(digest(Buffer.from(header, 'latin1').toString('utf8')), want);
}
