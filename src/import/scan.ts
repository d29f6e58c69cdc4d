// One quick pass over an input file before the import: its content hash (the journal's key), the number
// of records (the progress total), and, for UTF-8, whether it decodes (csv-parse turns invalid UTF-8 silently
// into U+FFFD, which would store corrupted values). Lines end as the readers split them (lines.ts):
// at CRLF, LF or CR, in any mix.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { TextDecoder } from 'node:util';
import { UsageError } from '../errors.js';
import { countLineBreaks, endsLine } from './lines.js';

/** What the pass found. */
export interface FileScan {
  sha256: string;
  bytes: number;
  /** Data records (header excluded) counted outside quotes; blank lines included, so an upper bound. */
  records: number;
}

const ASCII_COMPATIBLE = /^(utf-?8|unicode-1-1-utf-8|latin1|iso-8859-\d+|windows-125\d|cp125\d|ascii|us-ascii)$/i;

/** Hash, count and (for UTF-8) validate the file in one streamed pass; throws UsageError on bad UTF-8. */
export async function scanFile(path: string, encoding = 'utf-8'): Promise<FileScan> {
  const hash = createHash('sha256');
  const isUtf8 = /^(utf-?8|unicode-1-1-utf-8)$/i.test(encoding);
  // Counting quotes and line breaks byte by byte is only meaningful where those are single ASCII bytes.
  const countable = ASCII_COMPATIBLE.test(encoding);
  const decoder = isUtf8 ? new TextDecoder('utf-8', { fatal: true }) : undefined;
  let bytes = 0;
  let lines = 0;
  let quoted = false;
  let last = 0x0a;
  // For the line of a bad sequence: every line break (quoted or not) before the previous chunk, and that chunk.
  let breaks = 0;
  let previous: Chunk | undefined;
  for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) {
    hash.update(chunk);
    if (decoder) {
      try {
        decoder.decode(chunk, { stream: true });
      } catch {
        throw badUtf8(path, locateBadUtf8(previous, chunk, { breaksBefore: breaks, offset: bytes, lastBefore: last }));
      }
    }
    const breaksBefore = breaks;
    const lastBefore = last;
    if (countable) {
      for (let i = 0; i < chunk.length; i++) {
        const byte = chunk[i]!;
        // Most bytes are none of `"`, CR, LF: one comparison for them.
        if (byte > 0x22) continue;
        // A doubled quote toggles twice, so the state stays right for RFC 4180 files.
        if (byte === 0x22) quoted = !quoted;
        else if (endsLine(chunk, i, lastBefore)) {
          breaks++;
          if (!quoted) lines++;
        }
      }
      if (chunk.length > 0) last = chunk[chunk.length - 1]!;
    }
    previous = { chunk, breaksBefore, offset: bytes, lastBefore };
    bytes += chunk.length;
  }
  if (decoder) {
    try {
      decoder.decode();
    } catch {
      // A sequence cut short by the end of the file: its bytes are the last ones, after the last line break.
      throw badUtf8(path, { line: breaks + 1, offset: bytes - trailingPartial(previous?.chunk) });
    }
  }
  if (last !== 0x0a && last !== 0x0d && bytes > 0) lines++;
  return { sha256: hash.digest('hex'), bytes, records: countable ? Math.max(0, lines - 1) : 0 };
}

/** A chunk read: the line breaks and bytes before it, and its preceding byte (LF at the start of the file). */
interface Chunk {
  chunk: Buffer;
  breaksBefore: number;
  offset: number;
  lastBefore: number;
}

/** Where a bad sequence starts: its line (1-based, every line break counted) and byte offset. */
interface BadAt {
  line: number;
  offset: number;
}

/**
 * The start of the first invalid UTF-8 sequence in `buf` (WHATWG rules, as TextDecoder's fatal mode), or -1;
 * a sequence cut short by the end of `buf` is not invalid (the next chunk may complete it).
 */
export function firstInvalidUtf8(buf: Uint8Array): number {
  let i = 0;
  while (i < buf.length) {
    const byte = buf[i]!;
    if (byte < 0x80) {
      i++;
      continue;
    }
    let need: number;
    let lo = 0x80;
    let hi = 0xbf;
    if (byte >= 0xc2 && byte <= 0xdf) need = 1;
    else if (byte >= 0xe0 && byte <= 0xef) {
      need = 2;
      if (byte === 0xe0) lo = 0xa0;
      else if (byte === 0xed) hi = 0x9f;
    } else if (byte >= 0xf0 && byte <= 0xf4) {
      need = 3;
      if (byte === 0xf0) lo = 0x90;
      else if (byte === 0xf4) hi = 0x8f;
    } else return i;
    for (let k = 1; k <= need; k++) {
      if (i + k >= buf.length) return -1;
      const c = buf[i + k]!;
      if (c < (k === 1 ? lo : 0x80) || c > (k === 1 ? hi : 0xbf)) return i;
    }
    i += need + 1;
  }
  return -1;
}

/** How many bytes at the end of `chunk` start a sequence it does not finish (0 to 3). */
function trailingPartial(chunk: Buffer | undefined): number {
  if (!chunk) return 0;
  for (let back = 1; back <= Math.min(3, chunk.length); back++) {
    const b = chunk[chunk.length - back]!;
    if (b < 0x80) return 0;
    if (b >= 0xc0) return back;
  }
  return 0;
}

/**
 * Find the bad sequence TextDecoder refused in `chunk`. It may start in the previous chunk (a lead byte
 * at its end), so the search runs over both; the previous chunk decoded, so only up to three continuation
 * bytes at its start belong to a sequence begun earlier, and they are skipped.
 */
function locateBadUtf8(previous: Chunk | undefined, chunk: Buffer, here: { breaksBefore: number; offset: number; lastBefore: number }): BadAt {
  let skip = 0;
  if (previous) while (skip < 3 && skip < previous.chunk.length && (previous.chunk[skip]! & 0xc0) === 0x80) skip++;
  const before = previous ? previous.chunk.subarray(skip) : Buffer.alloc(0);
  const both = Buffer.concat([before, chunk]);
  let at = firstInvalidUtf8(both);
  if (at === -1) at = before.length; // not expected: TextDecoder found one
  const start = previous ? previous.breaksBefore : here.breaksBefore;
  // The skipped bytes are continuation bytes, neither CR nor LF: what precedes `both` only matters when none were.
  const byteBefore = previous ? (skip === 0 ? previous.lastBefore : 0x80) : here.lastBefore;
  const line = start + 1 + countLineBreaks(both, at, byteBefore);
  const offset = (previous ? previous.offset + skip : here.offset) + at;
  return { line, offset };
}

function badUtf8(path: string, at: BadAt): UsageError {
  return new UsageError(`${path} is not valid UTF-8 at line ${at.line} (byte ${at.offset}); nothing was sent.`, {
    hint: 'Pass its encoding, e.g. --encoding latin1 or --encoding windows-1252 or --encoding utf-16le.',
  });
}
