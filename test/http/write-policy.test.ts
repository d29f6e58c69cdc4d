// The write policy (the import's rows) in the one retry loop, in simulated time: a fake `next` replays
// queued answers behind the real rate gate and retry wrapper, so give-up-after, the unreachable grace,
// settling before a resend and the try cap are proven without sockets or waiting.
import { describe, expect, it } from 'vitest';
import { ApiError, CancelledError } from '../../src/errors.js';
import type { HttpRequest, HttpResponse, Send } from '../../src/http/core.js';
import { Pacer, withPacer } from '../../src/http/pacer.js';
import { type RetryInfo, withRetry } from '../../src/http/retry.js';
import { type WritePolicyOptions, WriteStopped, writePolicy } from '../../src/http/write-policy.js';
import { type SimClock, simClock } from '../helpers/sim.js';

const POST: HttpRequest = { method: 'POST', path: '/api/aptlet/b', body: { Name: 'x' } };
const ok: HttpResponse = { status: 200, headers: {}, body: { _id: 'c1' }, url: 'u', method: 'POST' };
const status = (s: number, retryAfter?: number) => new ApiError(`${s} from POST`, { method: 'POST', url: 'u', status: s, retryAfter });
const network = (code: string) => new ApiError(`POST failed (${code})`, { method: 'POST', url: 'u', code });

/** What happened, in order: each try (with its simulated time) and each settle. */
type Step = { try: number } | { settle: number };

/**
 * A write under the write policy, through the real retry loop and rate gate, against answers replayed in
 * order (the last repeats); each answer takes 5 ms. `settle` answers the board read (default: not applied).
 */
function harness(outcomes: Array<Error | HttpResponse>, opts: Partial<WritePolicyOptions> & { fixedRate?: number; seed?: number } = {}) {
  const clock: SimClock = simClock(opts.seed ?? 1);
  const steps: Step[] = [];
  const retries: RetryInfo[] = [];
  let i = 0;
  const next: Send = async () => {
    steps.push({ try: clock.now() });
    await clock.sleep(5);
    const answer = outcomes[Math.min(i++, outcomes.length - 1)]!;
    if (answer instanceof Error) throw answer;
    return answer;
  };
  const pacer = new Pacer({ clock, fixedRate: opts.fixedRate });
  const send = withRetry(withPacer(next, pacer), { clock });
  const policy = writePolicy({
    clock,
    maxTries: 6,
    giveUpAfterMs: 15 * 60_000,
    unreachableAfterMs: 30_000,
    onRetry: (info) => retries.push(info),
    settle: async () => {
      steps.push({ settle: clock.now() });
      return 'repeat';
    },
    ...opts,
  });
  const tries = () => steps.filter((s): s is { try: number } => 'try' in s).map((s) => s.try);
  const run = (req: HttpRequest = POST) => clock.run(send({ ...req, retry: policy })).catch((e: unknown) => e);
  return { clock, steps, retries, tries, run, pacer };
}

/** The reason a write policy stopped with. */
function stopped(err: unknown) {
  expect(err).toBeInstanceOf(WriteStopped);
  return (err as WriteStopped).why;
}

describe('the write policy: 429s (give-up-after)', () => {
  it('the rate gate holds each try after a 429 (no wait in the loop); 429s for giveUpAfterMs stop the write', async () => {
    const h = harness([status(429)], { giveUpAfterMs: 10_000 });
    const why = stopped(await h.run());
    expect(why).toMatchObject({ kind: 'throttled', err: { status: 429 } });
    if (why.kind !== 'throttled') return;
    // The first answer at 5 ms, then one try every 1005 ms: the 10th answer after it is the first past 10 s.
    expect(why.forMs).toBe(10_050);
    // Without Retry-After the gate pauses every worker for the floor (1 s): that, not the loop, spaces the tries.
    const t = h.tries();
    expect(t.slice(1).map((x, k) => x - t[k]!)).toEqual(Array.from({ length: 10 }, () => 1005));
    expect(h.retries.map((r) => r.delayMs)).toEqual(Array.from({ length: 10 }, () => 0));
    expect(h.steps.some((s) => 'settle' in s)).toBe(false);
  });

  it('a Retry-After longer than what giveUpAfterMs leaves stops at once, with the wait and the time already spent', async () => {
    const h = harness([status(429, 1), status(429, 1), status(429, 30)], { giveUpAfterMs: 20_000 });
    const why = stopped(await h.run());
    expect(h.tries()).toHaveLength(3);
    expect(why).toMatchObject({ kind: 'throttled-wait', askedMs: 30_000 });
    if (why.kind !== 'throttled-wait') return;
    // From the first 429's answer to the third's: two gate pauses of 1 s to 2 s each.
    expect(why.forMs).toBe(h.tries()[2]! - h.tries()[0]!);
    expect(why.forMs).toBeGreaterThanOrEqual(2000);
    // Stopped when the third answer came, not 30 s later.
    expect(h.clock.now()).toBe(h.tries()[2]! + 5);
  });

  it('429s do not count as tries: many of them, then a failure that may have been applied, still resend', async () => {
    const h = harness([status(429, 1), status(429, 1), status(429, 1), status(429, 1), status(500), ok], { maxTries: 2 });
    expect(await h.run()).toBe(ok);
    expect(h.tries()).toHaveLength(6);
    // The row event counts tries as the import always has: a 429 is not one, so the 500 is the first.
    expect(h.retries.map((r) => [r.err.status, r.counted])).toEqual([
      [429, 1],
      [429, 1],
      [429, 1],
      [429, 1],
      [500, 1],
    ]);
  });

  it('with 429s between them, failures that may have been applied are still capped at maxTries', async () => {
    const h = harness([status(500), status(429, 1), status(429, 1), status(502)], { maxTries: 2 });
    const why = stopped(await h.run());
    expect(why).toMatchObject({ kind: 'gave-up', tries: 2, err: { status: 502 } });
    expect(h.tries()).toHaveLength(4);
  });
});

describe('the write policy: a service that cannot be reached (the grace)', () => {
  it('refused connections are repeated past maxTries for the whole grace, then stop with how long it lasted', async () => {
    const h = harness([network('ECONNREFUSED')], { maxTries: 2, unreachableAfterMs: 30_000 });
    const why = stopped(await h.run());
    expect(why).toMatchObject({ kind: 'unreachable', err: { code: 'ECONNREFUSED' } });
    if (why.kind !== 'unreachable') return;
    expect(why.askedMs).toBeUndefined();
    expect(why.forMs).toBeGreaterThanOrEqual(30_000);
    // The last backoff before it was at most 8 s (the write backoff's cap).
    expect(why.forMs).toBeLessThan(30_000 + 8000 + 5);
    expect(h.tries().length).toBeGreaterThan(2);
    // Nothing can have been applied: the board is never read.
    expect(h.steps.some((s) => 'settle' in s)).toBe(false);
  });

  it('a 503 whose Retry-After outlasts the grace stops at once, naming the wait', async () => {
    const h = harness([status(503, 60)], { unreachableAfterMs: 30_000 });
    const why = stopped(await h.run());
    expect(why).toEqual({ kind: 'unreachable', err: expect.objectContaining({ status: 503 }), forMs: 0, askedMs: 60_000 });
    expect(h.tries()).toHaveLength(1);
  });

  it('a failure that cannot heal (host not found) stops at once', async () => {
    const h = harness([network('ENOTFOUND')]);
    expect(stopped(await h.run())).toMatchObject({ kind: 'unreachable', forMs: 0 });
    expect(h.tries()).toHaveLength(1);
  });

  it('a 503 waits its Retry-After (at least the floor) in the loop; the service back within the grace loses nothing', async () => {
    const h = harness([status(503, 2), status(503, 2), network('ECONNREFUSED'), ok]);
    expect(await h.run()).toBe(ok);
    const t = h.tries();
    expect(t[1]! - t[0]!).toBeGreaterThanOrEqual(2000 + 5);
    expect(t[2]! - t[1]!).toBeGreaterThanOrEqual(2000 + 5);
    expect(h.retries.map((r) => r.counted)).toEqual([1, 2, 3]);
  });

  it('an answer that may have been applied in between restarts the grace', async () => {
    // Refused until 20 s, one 500 (settled: not applied), refused again until 40 s, then through: never 30 s in a row.
    const clock = simClock();
    let fiveHundredDone = false;
    const next: Send = async () => {
      await clock.sleep(5);
      if (clock.now() >= 40_000) return ok;
      if (clock.now() >= 20_000 && !fiveHundredDone) {
        fiveHundredDone = true;
        throw status(500);
      }
      throw network('ECONNREFUSED');
    };
    const settles: number[] = [];
    const send = withRetry(next, { clock });
    const settle = async () => {
      settles.push(clock.now());
      return 'repeat' as const;
    };
    // Refused tries count as tries (only 429s do not): room for the 20 s of them before the 500.
    const retry = writePolicy({ clock, maxTries: 30, giveUpAfterMs: 60_000, unreachableAfterMs: 30_000, settle });
    await expect(clock.run(send({ ...POST, retry }))).resolves.toBe(ok);
    expect(settles).toHaveLength(1);
    expect(clock.now()).toBeGreaterThanOrEqual(40_000);
  });
});

describe('the write policy: a try that may have been applied is settled, never repeated blindly', () => {
  it('reads (settle) after the failure and before the resend; the resend comes after a backoff', async () => {
    const h = harness([status(500), network('ECONNRESET'), ok]);
    expect(await h.run()).toBe(ok);
    expect(h.steps.map((s) => ('try' in s ? 'try' : 'settle'))).toEqual(['try', 'settle', 'try', 'settle', 'try']);
    // The write backoff: under 200 ms after the first, under 400 ms after the second.
    const t = h.tries();
    expect(t[1]! - t[0]!).toBeLessThan(200 + 5);
    expect(t[2]! - t[1]!).toBeLessThan(400 + 5);
  });

  it("a settle that finds the write ends the request with the settle's answer: nothing is sent again", async () => {
    const found = new Error('found on the board');
    const h = harness([status(502), ok], { settle: async () => ({ stop: found }) });
    expect(await h.run()).toBe(found);
    expect(h.tries()).toHaveLength(1);
  });

  it('gives up after maxTries, reading the board after the last try too (a write found there is not lost)', async () => {
    const h = harness([status(500)], { maxTries: 3 });
    const why = stopped(await h.run());
    expect(why).toMatchObject({ kind: 'gave-up', tries: 3, err: { status: 500 } });
    expect(h.steps.map((s) => ('try' in s ? 'try' : 'settle'))).toEqual(['try', 'settle', 'try', 'settle', 'try', 'settle']);
  });

  it('a failure that may have been applied and cannot heal (an answer past the size limit) is settled once, then given up', async () => {
    const h = harness([network('UND_ERR_RES_EXCEEDED_MAX_SIZE'), ok]);
    expect(stopped(await h.run())).toMatchObject({ kind: 'gave-up', tries: 1 });
    expect(h.steps.filter((s) => 'settle' in s)).toHaveLength(1);
  });

  it("a refusal is rethrown as it is, after one try: repeating it cannot help", async () => {
    const refused = status(422);
    const h = harness([refused, ok]);
    expect(await h.run()).toBe(refused);
    expect(h.steps).toEqual([{ try: 0 }]);
  });
});

describe('the write policy in the loop: the journal, the gate and the wait signal', () => {
  it('awaits beforeTry before every try, retries included', async () => {
    const clock = simClock();
    const journal: number[] = [];
    const tries: number[] = [];
    const next: Send = async () => {
      tries.push(clock.now());
      await clock.sleep(5);
      if (tries.length < 3) throw network('ECONNREFUSED');
      return ok;
    };
    const send = withRetry(next, { clock });
    const retry = writePolicy({
      clock,
      maxTries: 6,
      giveUpAfterMs: 60_000,
      unreachableAfterMs: 30_000,
      settle: async () => 'repeat',
      beforeTry: () => {
        journal.push(clock.now());
        return clock.sleep(50);
      },
    });
    await expect(clock.run(send({ ...POST, retry }))).resolves.toBe(ok);
    expect(journal).toHaveLength(3);
    // Each try left only once its journal write was done.
    expect(tries.map((t, k) => t - journal[k]!)).toEqual([50, 50, 50]);
  });

  it('every try, retries included, passes the rate gate: at --rate 2/s they leave at least 500 ms apart', async () => {
    const h = harness([status(500), status(503), network('ECONNREFUSED'), status(429, 1), ok], { fixedRate: 2 });
    expect(await h.run()).toBe(ok);
    const t = h.tries();
    expect(t).toHaveLength(5);
    for (const gap of t.slice(1).map((x, k) => x - t[k]!)) expect(gap).toBeGreaterThanOrEqual(500);
  });

  it('the wait signal ends a wait between tries at once; no try starts after it (a try sent is not cut)', async () => {
    const clock = simClock();
    let tries = 0;
    const next: Send = async () => {
      tries++;
      await clock.sleep(5);
      throw status(503, 20);
    };
    const stop = new AbortController();
    void clock.sleep(1000).then(() => stop.abort());
    const send = withRetry(next, { clock });
    const retry = writePolicy({ clock, maxTries: 6, giveUpAfterMs: 60_000, unreachableAfterMs: 30_000, settle: async () => 'repeat' });
    const err = await clock.run(send({ ...POST, retry, waitSignal: stop.signal })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CancelledError);
    expect(clock.now()).toBe(1000);
    expect(tries).toBe(1);
  });
});
