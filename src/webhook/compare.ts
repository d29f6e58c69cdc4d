/*
 * Node hands a header value over as latin1 text of its raw bytes, so the key is compared in that form: the
 * key's UTF-8 bytes as latin1 text. A key with non-ASCII characters, sent as UTF-8, matches the key as the
 * user typed it, and bytes that are not UTF-8 never match (read as UTF-8 they would be U+FFFD). A key with a
 * lone surrogate cannot come over the wire as UTF-8 at all (it arrives as U+FFFD), so it never matches.
 *
 * The comparison is a loop over the received value that ORs the differences of every character: it never
 * stops early, so its time depends on the length of what the sender sent (which the sender knows), never on
 * the key or on where the two differ. It replaced a sha256 of each value compared with timingSafeEqual,
 * which cost three Buffers and a hash per delivery for the same answer.
 */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/** Whether `got` is `want`, in time that depends on `got.length` only; `want` undefined never matches. */
function sameText(got: string, want: string | undefined): boolean {
  const w = want ?? '';
  const n = w.length === 0 ? 1 : w.length;
  let diff = want === undefined || got.length !== w.length ? 1 : 0;
  // charCodeAt past the end of '' is NaN, which `^` reads as 0: the length check above decides then.
  for (let i = 0; i < got.length; i++) diff |= got.charCodeAt(i) ^ w.charCodeAt(i % n);
  return diff === 0;
}

/**
 * A check of received x-signingKey header values against the expected key (spec 6), prepared once here
 * rather than on every delivery. A missing or repeated header never matches.
 */
export function keyMatcher(expected: string): (header: string | string[] | undefined) => boolean {
  const want = LONE_SURROGATE.test(expected) ? undefined : Buffer.from(expected, 'utf8').toString('latin1');
  return (header) => typeof header === 'string' && sameText(header, want);
}
