import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { elapsedText, ForwardOutage } from '../../src/commands/webhook/outage-render.js';
import { createLiveLine, type LivePart, liveText } from '../../src/io/live-line.js';
import type { ForwardEvent } from '../../src/webhook/forwarder.js';

const URL = 'http://127.0.0.1:3000/hooks';
const refused = (attempt: number, pending = 4): ForwardEvent => ({ type: 'forward', seq: 7, url: 'http://127.0.0.1:3000/', attempt, answer: { ms: 0.4, body: Buffer.alloc(0), error: 'ECONNREFUSED' }, ok: false, retryInMs: 5000, pending });
const answered = (attempt: number, status: number): ForwardEvent => ({ type: 'forward', seq: 7, url: 'http://127.0.0.1:3000/', attempt, answer: { status, ms: 2, body: Buffer.from('{"ok":true}') }, ok: status < 300, retryInMs: status < 300 ? undefined : 5000, pending: status < 300 ? 3 : 4 });

describe('a long outage of the forward target: not a retry line every 5 s for ever', () => {
  it('prints the first failure, then only a rare reminder when piped, and one line when it is back', () => {
    const outage = new ForwardOutage(URL);
    const printed: Array<[number, string]> = [];
    const lives: LivePart[] = [];
    // One hour of tries every 5 s in simulated time.
    for (let t = 0, attempt = 1; t <= 3_600_000; t += 5000, attempt++) {
      const o = outage.next(refused(attempt), t);
      if (o.line) printed.push([t, o.line]);
      if (o.reminder) printed.push([t, o.reminder]);
      if (o.live) lives.push(o.live);
    }
    expect(lives).toHaveLength(721);
    expect(lives.at(-1)).toEqual({ state: 'forward down: ECONNREFUSED', detail: 'for 1h 00m, 721 tries, 4 deliveries waiting; retrying', url: URL });
    expect(liveText([lives.at(-1)!])).toBe(`forward down: ECONNREFUSED · for 1h 00m, 721 tries, 4 deliveries waiting; retrying · ${URL}`);
    expect(printed[0]).toEqual([0, '  ↳ #7 forward: no answer (ECONNREFUSED) after 0.4 ms  → retry in 5000 ms, 4 waiting']);
    // Reminders at 1, 2, 4, 8, 16, 32 minutes: 7 lines for 721 tries.
    expect(printed.slice(1).map(([t]) => t / 60_000)).toEqual([1, 2, 4, 8, 16, 32]);
    expect(printed[1]![1]).toBe(`forward down: ECONNREFUSED · for 1m 00s, 13 tries, 4 deliveries waiting; retrying · ${URL}`);
    // Between tries a terminal's line keeps counting.
    expect(outage.livePart(3_602_000)?.detail).toContain('for 1h 00m, 721 tries');
    const back = outage.next(answered(722, 200), 3_605_000);
    expect(back).toEqual({ line: `  ↳ #7 forward (try 722): 200 OK in 2.0 ms  {"ok":true}  (back up after 1h 00m down, 722 tries)`, over: true });
    expect(outage.down).toBe(false);
    expect(outage.livePart(3_606_000)).toBeUndefined();
    // Up again: each forward is its own line, as before.
    expect(outage.next(answered(1, 200), 3_606_000)).toEqual({ line: '  ↳ #7 forward: 200 OK in 2.0 ms  {"ok":true}' });
  });

  it('a new kind of failure is a line of its own; reminders go on after hourly', () => {
    const outage = new ForwardOutage(URL);
    expect(outage.next(refused(1), 0).line).toContain('ECONNREFUSED');
    expect(outage.next(refused(2), 5000).line).toBeUndefined();
    const changed = outage.next(answered(3, 503), 10_000);
    expect(changed.line).toContain('#7 forward (try 3): 503 Service Unavailable');
    expect(changed.live?.detail).toContain('for 10s, 3 tries');
    expect(outage.next(answered(4, 503), 15_000).line).toBeUndefined();
    const reminders: number[] = [];
    for (let t = 20_000, a = 5; t <= 4 * 3_600_000; t += 5000, a++) if (outage.next(answered(a, 503), t).reminder) reminders.push(t / 60_000);
    expect(reminders).toEqual([1, 2, 4, 8, 16, 32, 64, 124, 184]);
  });

  it('writes elapsed time as 42s, 1m 05s, 2h 03m', () => {
    expect([0, 42_999, 65_000, 3_599_000, 7_380_000].map(elapsedText)).toEqual(['0s', '42s', '1m 05s', '59m 59s', '2h 03m']);
  });
});

class FakeTty extends Writable {
  isTTY = true;
  columns = 40;
  text = '';
  override _write(chunk: Buffer, _enc: string, done: () => void): void {
    this.text += chunk.toString();
    done();
  }
}

describe('the live line on a terminal', () => {
  it('is rewritten in place, cut to the width, and moved out of the way of other lines', () => {
    const tty = new FakeTty();
    const live = createLiveLine(tty)!;
    const other = live.wrap(tty);
    other.write('before\n');
    live.show('down for 5s');
    live.show(`down for 10s ${'x'.repeat(60)}`);
    other.write('#2  POST /\n');
    live.clear();
    other.write('stopped\n');
    const E = '\r\u001b[2K';
    expect(tty.text).toBe(`before\n${E}down for 5s${E}down for 10s ${'x'.repeat(25)}…${E}#2  POST /\ndown for 10s ${'x'.repeat(25)}…${E}stopped\n`);
    expect(createLiveLine(Object.assign(new FakeTty(), { isTTY: false }))).toBeUndefined();
  });
});
