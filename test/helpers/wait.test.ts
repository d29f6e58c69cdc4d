import { describe, expect, it } from 'vitest';
import { CHILD_KILL_MS } from './cli.js';
import { WAIT_MS, waitFor, WaitTimeout, within } from './wait.js';

describe('waitFor', () => {
  it('resolves once the condition holds, looking again until then', async () => {
    let looks = 0;
    await waitFor(() => ++looks === 3, { what: 'the third look', intervalMs: 1 });
    expect(looks).toBe(3);
  });

  it('fails at its deadline, naming what it waited for', async () => {
    const failure = waitFor(() => false, { what: 'the app to answer', timeoutMs: 50 });
    await expect(failure).rejects.toThrow(WaitTimeout);
    await expect(failure).rejects.toThrow('timed out after 50 ms waiting for the app to answer');
  });

  it('asks a `what` given as a function at the failure, for the state things were left in', async () => {
    let arrived = 0;
    const failure = waitFor(() => ++arrived >= 1000, { what: () => `1000 requests (${arrived} arrived)`, timeoutMs: 20, intervalMs: 5 });
    await expect(failure).rejects.toThrow(/^timed out after 20 ms waiting for 1000 requests \(\d+ arrived\)$/);
    await expect(failure).rejects.not.toThrow('(0 arrived)');
  });

  it('by default gives up well before a child process is killed and the test times out', () => {
    expect(WAIT_MS).toBeLessThanOrEqual(CHILD_KILL_MS / 2);
  });

  it('without a `what`, names the condition by its source', async () => {
    const seen: string[] = [];
    await expect(waitFor(() => seen.length > 0, { timeoutMs: 20 })).rejects.toThrow('waiting for () => seen.length > 0');
  });

  it('stops at once when the condition can no longer come true, saying why', async () => {
    let looks = 0;
    const failure = waitFor(
      () => {
        looks++;
        return false;
      },
      { what: 'the Listening line', failWhen: () => looks >= 2 && 'the listener exited' },
    );
    await expect(failure).rejects.toThrow('the listener exited before the Listening line');
    expect(looks).toBe(2);
  });

  it('awaits a condition that is a promise', async () => {
    let n = 0;
    await waitFor(async () => ++n >= 2, { intervalMs: 1 });
    expect(n).toBe(2);
  });
});

describe('within', () => {
  it('gives what the promise gives, or its rejection', async () => {
    expect(await within(Promise.resolve(7), { what: 'seven' })).toBe(7);
    await expect(within(Promise.reject(new Error('no')), { what: 'a refusal' })).rejects.toThrow('no');
  });

  it('fails at its deadline, naming what it waited for', async () => {
    await expect(within(new Promise(() => {}), { what: 'the 200', timeoutMs: 30 })).rejects.toThrow('timed out after 30 ms waiting for the 200');
  });
});
