import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { OutStream } from '../../src/context.js';
import { createLiveLine } from '../../src/io/live-line.js';
import { displayWidth } from '../../src/io/width.js';

const ERASE = '\r\u001b[2K';

function terminal(columns: number): { stream: OutStream; writes: string[] } {
  const writes: string[] = [];
  const stream: OutStream = Object.assign(
    new Writable({
      write(chunk: Buffer, _enc, done) {
        writes.push(chunk.toString());
        done();
      },
    }),
    { isTTY: true, columns },
  );
  return { stream, writes };
}

describe('live line text', () => {
  it('is escaped by the one policy and cut by display width, whatever the caller passed', async () => {
    const { stream, writes } = terminal(20);
    const live = createLiveLine(stream)!;
    live.show(`\u001b]0;x\u0007${'漢'.repeat(20)}`);
    await new Promise((r) => setImmediate(r));
    const shown = writes.join('').slice(ERASE.length);
    // 19 columns (one spare): `\e]0;x\a` is 8, five ideographs 10, the ellipsis 1.
    expect(shown).toBe(`\\e]0;x\\a${'漢'.repeat(5)}…`);
    expect(displayWidth(shown)).toBe(19);
  });
  it('never splits an emoji at the edge', async () => {
    const { stream, writes } = terminal(20);
    createLiveLine(stream)!.show(`${'a'.repeat(17)}😀😀`);
    await new Promise((r) => setImmediate(r));
    expect(writes.join('')).toBe(`${ERASE}${'a'.repeat(17)}…`);
  });
});
