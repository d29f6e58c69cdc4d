import { hash, timingSafeEqual } from 'node:crypto';

/*
 * Node hands a header value over as latin1 text of its raw bytes, so the key is compared in that form: the
 * key's UTF-8 bytes as latin1 text. A key with non-ASCII characters, sent as UTF-8, matches the key as the
 * user typed it, and bytes that are not UTF-8 never match (read as UTF-8 they would be U+FFFD). A key with a
 * lone surrogate cannot come over the wire as UTF-8 at all (it arrives as U+FFFD), so it never matches.
 *
 * Both values are hashed (SHA-256) and the digests compared with crypto.timingSafeEqual: digests are all 32
 * bytes, so the comparison reads every byte whatever the lengths or the first difference, and hashing the
 * received value takes time that depends on its length only, which the sender knows anyway.
 */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/** SHA-256 of a string's UTF-8 bytes (a latin1 text's UTF-8 bytes stand for its bytes one to one). */
const digest = (text: string): Buffer => hash('sha256', text, 'buffer');

/**
 * A check of received x-signingKey header values against the expected key (spec 6), prepared once here
 * rather than on every delivery. A missing or repeated header never matches.
 */
export function keyMatcher(expected: string): (header: string | string[] | undefined) => boolean {
  const unmatchable = LONE_SURROGATE.test(expected);
  const want = digest(Buffer.from(expected, 'utf8').toString('latin1'));
  // timingSafeEqual runs first and always, so a key that can never match takes the same time as any other.
  return (header) => typeof header === 'string' && timingSafeEqual(digest(header), want) && !unmatchable;
}
