import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { OutStream } from '../../src/context.js';
import { createLiveLine, fitLive, type LivePart, liveText } from '../../src/io/live-line.js';
import { displayWidth, shortenMiddle } from '../../src/io/width.js';

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

describe('a live line of parts: the state first and whole, the URL last and cut first', () => {
  const outage: LivePart = { state: 'forward down: ECONNREFUSED', detail: 'for 5s, 2 tries, 1 delivery waiting; retrying', url: 'http://127.0.0.1:47999/hook' };
  const tunnel: LivePart = { state: 'tunnel reachable', detail: '3 delivered · 0 refused', url: 'https://brave-otter-example-words.trycloudflare.com' };

  it('is whole when it fits', () => {
    expect(fitLive([outage], 200)).toBe('forward down: ECONNREFUSED · for 5s, 2 tries, 1 delivery waiting; retrying · http://127.0.0.1:47999/hook');
    expect(fitLive([outage], 200)).toBe(liveText([outage]));
  });

  it('at 80 columns: the state and most of the detail whole, the URL cut', async () => {
    const { stream, writes } = terminal(80);
    createLiveLine(stream)!.show([outage]);
    await new Promise((r) => setImmediate(r));
    const shown = writes.join('').slice(ERASE.length);
    expect(shown).toBe('forward down: ECONNREFUSED · for 5s, 2 tries, 1 deliver… · 127.0.0.1:47999/hook');
    expect(displayWidth(shown)).toBe(79);
  });

  it('at 40 columns: the reason whole, the detail left out, the URL cut in the middle', async () => {
    const { stream, writes } = terminal(40);
    createLiveLine(stream)!.show([outage]);
    await new Promise((r) => setImmediate(r));
    const shown = writes.join('').slice(ERASE.length);
    expect(shown).toBe('forward down: ECONNREFUSED · 127.0…hook');
    expect(displayWidth(shown)).toBe(39);
  });

  it('tunnel and outage together: both states whole at 80 and at 40 where they fit, URLs cut first', () => {
    const at80 = fitLive([tunnel, outage], 79);
    expect(displayWidth(at80)).toBeLessThanOrEqual(79);
    expect(at80.startsWith('tunnel reachable · ')).toBe(true);
    expect(at80).toContain('  |  forward down: ECONNREFUSED');
    expect(at80).not.toContain('https://brave-otter-example-words.trycloudflare.com');
    const at40 = fitLive([{ ...tunnel, detail: undefined }, { ...outage, state: 'forward down: 503' }], 39);
    expect(at40).toBe('tunnel reachable  |  forward down: 503');
  });

  it('a state wider than the terminal is cut at its end, as the last resort', () => {
    expect(fitLive([outage], 20)).toBe('forward down: ECONN…');
  });

  it('cuts a URL in the middle by display width, never inside a cluster', () => {
    expect(shortenMiddle('http://127.0.0.1:47999/hook', 11)).toBe('http:…/hook');
    expect(shortenMiddle('http://例え.jp/ページ', 10)).toBe('http:…ージ');
    expect(displayWidth(shortenMiddle('http://例え.jp/ページ', 10))).toBeLessThanOrEqual(10);
    expect(shortenMiddle('short', 10)).toBe('short');
  });
});
