// One quick pass over an input file before the import: its content hash (the journal's key), the number
// of records (the progress total), and, for UTF-8, whether it decodes (PITFALLS: invalid UTF-8 silently
// becomes U+FFFD, which would store corrupted values).
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { TextDecoder } from 'node:util';
import { UsageError } from '../errors.js';

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
  // Counting quotes and line feeds byte by byte is only meaningful where those are single ASCII bytes.
  const countable = ASCII_COMPATIBLE.test(encoding);
  const decoder = isUtf8 ? new TextDecoder('utf-8', { fatal: true }) : undefined;
  let bytes = 0;
  let lines = 0;
  let quoted = false;
  let last = 0x0a;
  for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) {
    hash.update(chunk);
    if (decoder) {
      try {
        decoder.decode(chunk, { stream: true });
      } catch {
        throw badUtf8(path, lines + 1);
      }
    }
    if (countable) {
      for (let i = 0; i < chunk.length; i++) {
        const b = chunk[i];
        // A doubled quote toggles twice, so the state stays right for RFC 4180 files.
        if (b === 0x22) quoted = !quoted;
        else if (b === 0x0a && !quoted) lines++;
      }
      if (chunk.length > 0) last = chunk[chunk.length - 1]!;
    }
    bytes += chunk.length;
  }
  if (decoder) {
    try {
      decoder.decode();
    } catch {
      throw badUtf8(path, lines + 1);
    }
  }
  if (last !== 0x0a && bytes > 0) lines++;
  return { sha256: hash.digest('hex'), bytes, records: countable ? Math.max(0, lines - 1) : 0 };
}

function badUtf8(path: string, line: number): UsageError {
  return new UsageError(`${path} is not valid UTF-8 (near line ${line}); nothing was sent.`, {
    hint: 'Pass its encoding, e.g. --encoding latin1 or --encoding windows-1252 or --encoding utf-16le.',
  });
}
