// Invalid UTF-8 is reported at its exact line (every line feed before it counted, quoted
// or not) and byte offset, also where the bad sequence or its lead byte sits at a 64 KiB chunk boundary.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { firstInvalidUtf8, scanFile } from '../../src/import/scan.js';
import { tempDir } from '../helpers/cli.js';

const CHUNK = 64 * 1024;

function file(bytes: Buffer): string {
  const path = join(tempDir(), 'in.csv');
  writeFileSync(path, bytes);
  return path;
}

async function failure(path: string): Promise<string> {
  try {
    await scanFile(path);
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error('scanFile accepted invalid UTF-8');
}

/** 15,000 lines with multi-byte text and quoted fields holding line feeds (records and lines differ). */
function body(lines: number): Buffer {
  const parts = ['Name,Note\n'];
  for (let n = 2; parts.length < lines; n++) {
    parts.push(n % 7 === 0 ? `"row ${n} ünïcödé","first\n` : n % 7 === 1 ? `second ✓ line"\n` : `row ${n} ✓ €,plain\n`);
  }
  return Buffer.from(parts.join(''), 'utf8');
}

describe('invalid UTF-8 line numbers', () => {
  it('reports line 15,001 for a bad byte at the start of line 15,001', async () => {
    const head = body(15_000);
    expect(head.toString('utf8').split('\n').length - 1).toBe(15_000);
    const path = file(Buffer.concat([head, Buffer.from([0x41, 0xff, 0x42, 0x0a]), Buffer.from('tail\n')]));
    expect(await failure(path)).toContain(`is not valid UTF-8 at line 15001 (byte ${head.length + 1})`);
  });

  it('finds a lead byte that ends one chunk and a bad continuation that starts the next', async () => {
    const filler = Buffer.from('a,b\n'.repeat(CHUNK / 4 - 1) + 'a,b', 'utf8'); // CHUNK - 1 bytes, 16,383 line feeds
    expect(filler.length).toBe(CHUNK - 1);
    const path = file(Buffer.concat([filler, Buffer.from([0xe2]), Buffer.from('X\nmore\n')]));
    expect(await failure(path)).toContain(`at line ${CHUNK / 4} (byte ${CHUNK - 1})`);
  });

  it('finds a stray continuation byte that starts a chunk after a sequence split across the boundary', async () => {
    const filler = Buffer.from('x\n'.repeat((CHUNK - 2) / 2), 'utf8'); // CHUNK - 2 bytes
    const euro = Buffer.from('€', 'utf8'); // 3 bytes: 2 in the first chunk, 1 in the second
    const path = file(Buffer.concat([filler, euro, Buffer.from([0x80]), Buffer.from('\n')]));
    expect(await failure(path)).toContain(`at line ${(CHUNK - 2) / 2 + 1} (byte ${CHUNK + 1})`);
  });

  it('reports a sequence cut short by the end of the file on the last line', async () => {
    const path = file(Buffer.concat([Buffer.from('Name\nok\nlast '), Buffer.from([0xf0, 0x9f])]));
    expect(await failure(path)).toContain('at line 3 (byte 13)');
  });

  it('still accepts valid UTF-8 across chunk boundaries', async () => {
    const path = file(Buffer.from(`Name\n${'✓€😀\n'.repeat(20_000)}`, 'utf8'));
    expect((await scanFile(path)).records).toBe(20_000);
  });

  it('firstInvalidUtf8 agrees with TextDecoder on the WHATWG edge cases', () => {
    const cases: [number[], number][] = [
      [[0x41, 0xc0, 0x80], 1], // overlong lead
      [[0xe0, 0x80, 0x80], 0], // overlong 3-byte
      [[0xed, 0xa0, 0x80], 0], // surrogate
      [[0xf4, 0x90, 0x80, 0x80], 0], // above U+10FFFF
      [[0xf5], 0],
      [[0xe2, 0x82], -1], // cut short: maybe completed by the next chunk
      [[0xe2, 0x82, 0xac, 0x41], -1],
      [[0x41, 0xe2, 0x41], 1],
    ];
    for (const [bytes, at] of cases) {
      expect(firstInvalidUtf8(Uint8Array.from(bytes))).toBe(at);
      const valid = (() => {
        try {
          new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(bytes), { stream: true });
          return true;
        } catch {
          return false;
        }
      })();
      expect(valid).toBe(at === -1);
    }
  });
});
