import { createHash, timingSafeEqual } from 'node:crypto';

function digest(bytes: Buffer): Buffer {
  return createHash('sha256').update(bytes).digest();
}

/**
 * Constant-time string comparison with exactly the answer of `a === b` (spec 6: plain string equality).
 * Both sides are hashed first so the comparison never branches on where they differ or on their lengths;
 * the UTF-16 code units are hashed (not UTF-8) because UTF-8 maps every lone surrogate to U+FFFD, which
 * would make two different strings compare equal. The final length check turns "same digest" into
 * "same string" without relying on the absence of sha256 collisions.
 */
export function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf16le');
  const right = Buffer.from(b, 'utf16le');
  const sameDigest = timingSafeEqual(digest(left), digest(right));
  return sameDigest && left.length === right.length;
}

/**
 * Whether a received x-signingKey header value carries the expected key (spec 6). Node hands header values
 * over as latin1 text of the raw bytes; they are read back as UTF-8 so a key with non-ASCII characters,
 * sent as UTF-8, matches the key as the user typed it. A missing header never matches.
 */
export function signingKeyMatches(header: string | string[] | undefined, expected: string): boolean {
  if (typeof header !== 'string') return false;
  const received = Buffer.from(header, 'latin1').toString('utf8');
  return safeEqual(received, expected);
}
