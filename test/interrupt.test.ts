import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { createContext } from '../src/context.js';
import { Cancellation, childStop, type SignalSource, type StopSignal } from '../src/interrupt.js';

/** A signal source the test fires by hand, recording exitNow calls and listener counts. */
function fakeSignals() {
  const listeners = new Set<(s: StopSignal) => void>();
  const exits: StopSignal[] = [];
  const source: SignalSource = {
    listen(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    exitNow: (signal) => void exits.push(signal),
  };
  return { source, exits, fire: (s: StopSignal) => [...listeners].forEach((l) => l(s)), listening: () => listeners.size };
}

/** A clock whose sleeps end when the test says (or when their signal aborts). */
function manualSleep() {
  const pending: { ms: number; wake: () => void }[] = [];
  const sleep = (ms: number, signal?: AbortSignal) =>
    new Promise<void>((resolve) => {
      pending.push({ ms, wake: resolve });
      signal?.addEventListener('abort', () => resolve(), { once: true });
    });
  return { clock: { sleep }, pending, elapse: () => pending.splice(0).forEach((p) => p.wake()) };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('Cancellation: the run signal tree', () => {
  it('Ctrl-C outside a draining run stops now: both signals abort with the reason; no exit', () => {
    const s = fakeSignals();
    const c = new Cancellation(s.source, manualSleep().clock);
    expect([c.signal.aborted, c.drain.aborted, c.reason]).toEqual([false, false, undefined]);
    s.fire('SIGINT');
    expect([c.signal.aborted, c.drain.aborted, c.reason]).toEqual([true, true, 'SIGINT']);
    expect(s.exits).toEqual([]);
  });

  it('a second signal ends the process at once, by that signal', () => {
    const s = fakeSignals();
    new Cancellation(s.source, manualSleep().clock);
    s.fire('SIGTERM');
    expect(s.exits).toEqual([]);
    s.fire('SIGINT');
    expect(s.exits).toEqual(['SIGINT']);
    const t = fakeSignals();
    new Cancellation(t.source, manualSleep().clock);
    t.fire('SIGINT');
    t.fire('SIGTERM');
    expect(t.exits).toEqual(['SIGTERM']);
  });

  it('while draining, the first Ctrl-C takes no new work, says so once, and stops now when the grace ends', async () => {
    const s = fakeSignals();
    const m = manualSleep();
    const c = new Cancellation(s.source, m.clock);
    const said: StopSignal[] = [];
    c.drainOn({ graceMs: 2000, onFirst: (sig) => said.push(sig) });
    s.fire('SIGINT');
    expect([c.drain.aborted, c.signal.aborted, said]).toEqual([true, false, ['SIGINT']]);
    expect(m.pending.map((p) => p.ms)).toEqual([2000]);
    m.elapse();
    await tick();
    expect([c.signal.aborted, c.reason]).toEqual([true, 'SIGINT']);
    expect(s.exits).toEqual([]);
    s.fire('SIGINT');
    expect(s.exits).toEqual(['SIGINT']);
  });

  it('while draining, a second Ctrl-C within the grace ends the process at once by SIGINT', () => {
    const s = fakeSignals();
    const c = new Cancellation(s.source, manualSleep().clock);
    c.drainOn({ graceMs: 2000 });
    s.fire('SIGINT');
    s.fire('SIGINT');
    expect(s.exits).toEqual(['SIGINT']);
  });

  it('SIGTERM stops now even while draining; a drain window ended makes Ctrl-C stop now again', () => {
    const s = fakeSignals();
    const c = new Cancellation(s.source, manualSleep().clock);
    c.drainOn({ graceMs: 2000 });
    s.fire('SIGTERM');
    expect([c.signal.aborted, c.reason]).toEqual([true, 'SIGTERM']);
    const s2 = fakeSignals();
    const c2 = new Cancellation(s2.source, manualSleep().clock);
    c2.drainOn({ graceMs: 2000 })();
    s2.fire('SIGINT');
    expect(c2.signal.aborted).toBe(true);
  });

  it('leaveInterrupts (a pager in the foreground): Ctrl-C is not acted on however often; SIGTERM still stops', () => {
    const s = fakeSignals();
    const c = new Cancellation(s.source, manualSleep().clock);
    const leave = c.drainOn({ leaveInterrupts: true });
    for (let i = 0; i < 3; i++) s.fire('SIGINT');
    expect([c.drain.aborted, s.exits]).toEqual([false, []]);
    s.fire('SIGTERM');
    expect(c.reason).toBe('SIGTERM');
    leave();
  });

  it('a broken pipe stops now with its own reason; dispose stops listening', () => {
    const s = fakeSignals();
    const c = new Cancellation(s.source, manualSleep().clock);
    expect(s.listening()).toBe(1);
    c.stop('broken-pipe');
    expect([c.signal.aborted, c.drain.aborted, c.reason]).toEqual([true, true, 'broken-pipe']);
    c.dispose();
    expect(s.listening()).toBe(0);
  });

  it('many waits on the run signals never print a listener-leak warning, and each wait leaves no listener behind', async () => {
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    try {
      const c = new Cancellation(fakeSignals().source, manualSleep().clock);
      const waits = Array.from({ length: 64 }, () => new Promise<void>((resolve) => {
        const done = () => {
          c.signal.removeEventListener('abort', done);
          resolve();
        };
        c.signal.addEventListener('abort', done);
        setImmediate(done);
      }));
      await Promise.all(waits);
      await tick();
      expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
      expect(getEventListeners(c.signal, 'abort').length).toBe(1); // the drain child's own link
    } finally {
      process.off('warning', onWarning);
    }
  });
});

describe('childStop', () => {
  it('follows its parent, stops alone when pulled, and leaves no listener on the parent once stopped', () => {
    const parent = childStop();
    const before = getEventListeners(parent.signal, 'abort').length;
    const own = childStop(parent.signal);
    expect(getEventListeners(parent.signal, 'abort').length).toBe(before + 1);
    own.abort('fatal');
    expect([own.signal.aborted, own.signal.reason, parent.signal.aborted]).toEqual([true, 'fatal', false]);
    expect(getEventListeners(parent.signal, 'abort').length).toBe(before);
    const follower = childStop(parent.signal);
    parent.abort('SIGINT');
    expect([follower.signal.aborted, follower.signal.reason]).toEqual([true, 'SIGINT']);
    expect(childStop(parent.signal).signal.aborted).toBe(true);
  });
});

describe("the context's stop and drain", () => {
  it('ctx.signal stops now; ctx.drain.enable() makes the first Ctrl-C abort only ctx.drain.signal, until it is undone', () => {
    const s = fakeSignals();
    const ctx = createContext({ env: {}, signals: s.source });
    const undo = ctx.drain.enable();
    s.fire('SIGINT');
    expect([ctx.drain.signal.aborted, ctx.signal.aborted]).toEqual([true, false]);
    undo();
    const t = fakeSignals();
    const other = createContext({ env: {}, signals: t.source });
    other.drain.enable()();
    t.fire('SIGINT');
    expect([other.drain.signal.aborted, other.signal.aborted]).toEqual([true, true]);
  });
});
