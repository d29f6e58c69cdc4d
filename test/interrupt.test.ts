import { describe, expect, it } from 'vitest';
import { interruptible, type SignalSource, type StopSignal } from '../src/interrupt.js';

/** A signal source the test fires by hand, recording exitNow calls and listener counts. */
function fakeSignals() {
  const listeners = new Set<(s: StopSignal) => void>();
  const exits: number[] = [];
  const source: SignalSource = {
    listen(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    exitNow: (code) => void exits.push(code),
  };
  return { source, exits, fire: (s: StopSignal) => [...listeners].forEach((l) => l(s)), listening: () => listeners.size };
}

describe('interruptible: one helper for Ctrl-C and SIGTERM', () => {
  it('first signal: onFirst runs once, the signal aborts, stopped resolves with it; no exit', async () => {
    const s = fakeSignals();
    const seen: StopSignal[] = [];
    const run = interruptible(s.source, (sig) => seen.push(sig));
    expect(run.signal.aborted).toBe(false);
    s.fire('SIGINT');
    expect(run.signal.aborted).toBe(true);
    await expect(run.stopped).resolves.toBe('SIGINT');
    expect(seen).toEqual(['SIGINT']);
    expect(s.exits).toEqual([]);
  });

  it('second signal: exits at once with 130, without calling onFirst again', () => {
    const s = fakeSignals();
    let first = 0;
    interruptible(s.source, () => first++);
    s.fire('SIGTERM');
    s.fire('SIGINT');
    expect(first).toBe(1);
    expect(s.exits).toEqual([130]);
  });

  it('dispose stops listening, so the default signal handling comes back', () => {
    const s = fakeSignals();
    const run = interruptible(s.source);
    expect(s.listening()).toBe(1);
    run.dispose();
    expect(s.listening()).toBe(0);
    s.fire('SIGINT');
    expect(run.signal.aborted).toBe(false);
  });
});
