import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';

/** Largest body accepted once decompressed; the same 64 MB as the dispatcher's limit on the wire. */
const MAX_DECODED_BYTES = 64 * 1024 * 1024;

// A Map: the coding is the server's word, and `Content-Encoding: constructor` must be unsupported, not Object.
const DECODERS = new Map<string, (buf: Buffer, opts: { maxOutputLength: number }) => Buffer>([
  ['gzip', gunzipSync],
  ['x-gzip', gunzipSync],
  ['deflate', inflateSync],
  ['br', brotliDecompressSync],
]);

/**
 * UTF-8 text of a body, a byte order mark dropped (as TextDecoder does; JSON.parse would choke on it).
 * Buffer's own decoding (the same replacement of bad bytes as TextDecoder's) costs less per small answer
 * than TextDecoder's, and the import decodes one answer per row.
 */
export function utf8(buf: Buffer): string {
  const text = buf.toString('utf8');
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/**
 * The body as text after undoing its Content-Encoding (decodedBytes), a byte order mark dropped.
 */
export function decodeBody(bytes: Buffer, contentEncoding: string | string[] | undefined): string {
  return utf8(decodedBytes(bytes, contentEncoding));
}

/**
 * The body's bytes after undoing its Content-Encoding. undici's request() sends no Accept-Encoding
 * and decodes nothing, but RFC 9110 12.5.3 lets a server pick any coding when the request names none,
 * so a gzipping server must not turn into "not valid JSON". Codings are undone last-applied first.
 */
export function decodedBytes(bytes: Buffer, contentEncoding: string | string[] | undefined): Buffer {
  // The usual answer names no coding: no arrays built for it (this runs for every row of an import).
  if (contentEncoding === undefined || bytes.length === 0) return bytes;
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
  return buf;
}
