import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';

/** Largest body accepted once decompressed; the same 64 MB as the dispatcher's limit on the wire. */
export const MAX_DECODED_BYTES = 64 * 1024 * 1024;

// A Map: the coding is the server's word, and `Content-Encoding: constructor` must be unsupported, not Object.
const DECODERS = new Map<string, (buf: Buffer, opts: { maxOutputLength: number }) => Buffer>([
  ['gzip', gunzipSync],
  ['x-gzip', gunzipSync],
  ['deflate', inflateSync],
  ['br', brotliDecompressSync],
]);

/** One decoder for every body: building a TextDecoder per response costs more than the decoding of a small one. */
const UTF8 = new TextDecoder();

/**
 * The body as text after undoing its Content-Encoding. undici's request() sends no Accept-Encoding
 * and decodes nothing, but RFC 9110 12.5.3 lets a server pick any coding when the request names none,
 * so a gzipping server must not turn into "not valid JSON". Codings are undone last-applied first.
 * A byte order mark is dropped (TextDecoder does that), as JSON.parse would choke on it.
 */
export function decodeBody(bytes: Buffer, contentEncoding: string | string[] | undefined): string {
  // The usual answer names no coding: no arrays built for it (this runs for every row of an import).
  if (contentEncoding === undefined || bytes.length === 0) return UTF8.decode(bytes);
  const codings = [contentEncoding ?? []]
    .flat()
    .flatMap((v) => v.split(','))
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== '' && c !== 'identity');
  let buf = bytes;
  if (buf.length > 0) {
    for (const coding of codings.reverse()) {
      const decoder = DECODERS.get(coding);
      if (!decoder) throw Object.assign(new Error(`unsupported Content-Encoding ${coding}`), { code: 'EUNSUPPORTED_ENCODING' });
      buf = decoder(buf, { maxOutputLength: MAX_DECODED_BYTES });
    }
  }
  return UTF8.decode(buf);
}
