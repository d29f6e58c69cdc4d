import { Readable } from 'node:stream';
import { readCsv } from '../../src/import/source.js';
import type { CsvItem } from '../../src/import/types.js';

/** Everything readCsv yields for `data`, fed in chunks of `chunk` bytes (whole by default). */
export async function readAll(data: string | Buffer, opts: { delimiter?: string; encoding?: string; chunk?: number } = {}): Promise<CsvItem[]> {
  const buf = typeof data === 'string' ? Buffer.from(data) : data;
  const size = opts.chunk ?? buf.length;
  const chunks: Buffer[] = [];
  for (let i = 0; i < buf.length; i += size) chunks.push(buf.subarray(i, i + size));
  const out: CsvItem[] = [];
  for await (const item of readCsv(Readable.from(chunks), opts)) out.push(item);
  return out;
}
