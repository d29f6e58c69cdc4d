import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/errors.js';
import type { HttpRequest, HttpResponse, Send } from '../../src/http/core.js';
import type { Clock } from '../../src/clock.js';
import { backoffMs, classify, mayRepeat } from '../../src/http/failure.js';
import { Pacer, withPacer } from '../../src/http/pacer.js';
import { DEFAULT_RETRY, retryDelay } from '../../src/http/command-policy.js';
import { NO_RETRY, withRetry } from '../../src/http/retry.js';
import { simClock } from '../helpers/sim.js';

const GET: HttpRequest = { method: 'GET', path: '/x' };
const POST: HttpRequest = { method: 'POST', path: '/x', body: {} };
const status = (s: number, retryAfter?: number) => new ApiError(`${s}`, { method: 'GET', url: 'u', status: s, retryAfter });
const network = (code: string) => new ApiError(code, { method: 'GET', url: 'u', code });
const half = () => 0.5;

describe('retry decisions', () => {
  it('retries GET on 5xx, 429 and network errors with full-jitter backoff', () => {
    expect(retryDelay(status(500), GET, 1, DEFAULT_RETRY, half)).toBe(250);
    expect(retryDelay(status(502), GET, 2, DEFAULT_RETRY, half)).toBe(500);
    // A rate limit backs off by its own count of throttled tries (the third here), not the tries in all.
    // Declined without Retry-After: the 1 s floor plus that backoff.
    expect(retryDelay(status(429), GET, 3, DEFAULT_RETRY, () => 0.999, { throttledTries: 2, waitedMs: 1500 })).toBe(2998);
    expect(retryDelay(network('ECONNRESET'), GET, 1, DEFAULT_RETRY, half)).toBe(250);
    expect(retryDelay(network('UND_ERR_HEADERS_TIMEOUT'), GET, 1, DEFAULT_RETRY, () => 0)).toBe(0);
  });

  it('never retries 400/401/403/404 or permanent network failures', () => {
    for (const s of [400, 401, 403, 404, 409, 422, 301]) expect(retryDelay(status(s), GET, 1, DEFAULT_RETRY, half)).toBeUndefined();
    expect(retryDelay(network('ENOTFOUND'), GET, 1, DEFAULT_RETRY, half)).toBeUndefined();
    expect(retryDelay(new Error('bug'), GET, 1, DEFAULT_RETRY, half)).toBeUndefined();
  });

  it('honours Retry-After on 429 and 503, and gives up when it is too long', () => {
    // Retry-After plus a spread of up to a quarter of the wait (at most a second): 3 s + half of 750 ms.
    expect(retryDelay(status(429, 3), GET, 1, DEFAULT_RETRY, half)).toBe(3375);
    expect(retryDelay(status(503, 2), GET, 1, DEFAULT_RETRY, () => 0)).toBe(2000);
    expect(retryDelay(status(500, 9), GET, 1, DEFAULT_RETRY, half)).toBe(250);
    expect(retryDelay(status(429, 61), GET, 1, DEFAULT_RETRY, half)).toBeUndefined();
  });

  it('repeats a POST only when nothing can have been applied, or when the caller marked it safe', () => {
    expect(retryDelay(status(500), POST, 1, DEFAULT_RETRY, half)).toBeUndefined();
    expect(retryDelay(network('ECONNRESET'), POST, 1, DEFAULT_RETRY, half)).toBeUndefined();
    expect(retryDelay(status(500), { ...POST, retrySafe: true }, 1, DEFAULT_RETRY, half)).toBe(250);
    expect(retryDelay(network('ECONNREFUSED'), POST, 1, DEFAULT_RETRY, half)).toBe(250);
    // 429 and 503: the server says it did nothing, so the import and a single write agree to repeat.
    expect(retryDelay(status(503), POST, 1, DEFAULT_RETRY, half)).toBe(1250);
    expect(retryDelay(status(429, 2), POST, 1, DEFAULT_RETRY, () => 0)).toBe(2000);
  });

  it("stops at maxTries, the client's or the request's", () => {
    expect(retryDelay(status(500), GET, 4, DEFAULT_RETRY, half)).toBeUndefined();
    expect(retryDelay(status(500), GET, 2, { ...DEFAULT_RETRY, maxTries: 2 }, half)).toBeUndefined();
    expect(retryDelay(status(500), { ...GET, maxTries: 6 }, 4, DEFAULT_RETRY, half)).toBe(2000);
  });

  it('classifies every failure once: not sent, retryable, maybe applied, refused', () => {
    const kind = (e: ApiError) => classify(e).kind;
    for (const c of ['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT', 'CERT_HAS_EXPIRED']) expect(kind(network(c))).toBe('not-sent');
    for (const c of ['ECONNRESET', 'UND_ERR_SOCKET', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ERR_ANSWER_TIMEOUT']) expect(kind(network(c))).toBe('maybe-applied');
    for (const s of [200, 500, 502, 504]) expect(kind(status(s))).toBe('maybe-applied');
    for (const s of [429, 503]) expect(kind(status(s))).toBe('retryable');
    for (const s of [301, 400, 401, 403, 404, 409, 501]) expect(kind(status(s))).toBe('refused');
    expect(classify(status(429, 7)).retryAfterMs).toBe(7000);
    // A TLS failure is not sent (so a POST cannot duplicate) and does not heal: it is never retried.
    expect(classify(network('CERT_HAS_EXPIRED'))).toEqual({ kind: 'not-sent', heals: false });
    expect(mayRepeat(classify(network('CERT_HAS_EXPIRED')), true)).toBe(false);
    expect(mayRepeat(classify(network('ECONNRESET')), false)).toBe(false);
    expect(mayRepeat(classify(network('ECONNRESET')), true)).toBe(true);
    expect(mayRepeat(classify(network('UND_ERR_RES_EXCEEDED_MAX_SIZE')), true)).toBe(false);
  });

  it('backs off exponentially with full jitter, capped', () => {
    const bounds = { baseMs: 200, maxMs: 8000 };
    expect([1, 2, 3, 4, 5, 6, 7].map((a) => backoffMs(a, bounds, () => 0.999999))).toEqual([199, 399, 799, 1599, 3199, 6399, 7999]);
    expect(backoffMs(3, bounds, () => 0)).toBe(0);
    expect(backoffMs(40, bounds, () => 0.5)).toBe(4000);
  });
});

describe('withRetry', () => {
  const ok: HttpResponse = { status: 200, headers: {}, body: 'ok', url: 'u', method: 'GET' };
  function replay(outcomes: Array<Error | HttpResponse>): { send: Send; calls: () => number } {
    let i = 0;
    return {
      send: async () => {
        const next = outcomes[i++]!;
        if (next instanceof Error) throw next;
        return next;
      },
      calls: () => i,
    };
  }

  /** A clock whose sleeps only record how long they would have been. */
  const recording = (waits: number[] = []): Clock => ({ now: () => 0, random: half, sleep: async (ms) => void waits.push(ms) });

  it('waits the decided delays, then returns the success', async () => {
    const waits: number[] = [];
    const fake = replay([status(503, 2), status(500), ok]);
    const send = withRetry(fake.send, { clock: recording(waits) });
    await expect(send(GET)).resolves.toBe(ok);
    // 2 s asked + 0.25 s spread (half of a quarter); the 500 is the first failure of its kind: a rate limit's wait does not double its backoff.
    expect(waits).toEqual([2250, 250]);
    expect(fake.calls()).toBe(3);
  });

  it('rethrows the last error after maxTries', async () => {
    const last = status(502);
    const fake = replay([status(500), status(500), last, ok]);
    const send = withRetry(fake.send, { clock: recording(), limits: { maxTries: 3 } });
    await expect(send(GET)).rejects.toBe(last);
    expect(fake.calls()).toBe(3);
  });

  it('a request with NO_RETRY is sent once, even for a 429 the client would wait for', async () => {
    const waits: number[] = [];
    const fake = replay([status(429, 1), ok]);
    const send = withRetry(fake.send, { clock: recording(waits) });
    await expect(send({ ...GET, retry: NO_RETRY })).rejects.toMatchObject({ status: 429, message: '429' });
    expect(fake.calls()).toBe(1);
    expect(waits).toEqual([]);
  });

  it('sends a 404 once', async () => {
    const fake = replay([status(404), ok]);
    const send = withRetry(fake.send, { clock: recording() });
    await expect(send(GET)).rejects.toMatchObject({ status: 404 });
    expect(fake.calls()).toBe(1);
  });
});

describe('the rate gate in front of the core (withPacer, fake clock)', () => {
  function fakeClock() {
    let t = 1000;
    return { now: () => t, sleep: async (ms: number) => void (t += ms), random: half };
  }
  const answer = (outcomes: Array<Error | HttpResponse>) => {
    let i = 0;
    return async () => {
      const next = outcomes[i++]!;
      if (next instanceof Error) throw next;
      return next;
    };
  };
  const ok: HttpResponse = { status: 200, headers: {}, body: 'ok', url: 'u', method: 'GET' };

  it('spaces requests at a fixed --rate', async () => {
    const clock = fakeClock();
    const send = withPacer(answer([ok, ok, ok, ok]), new Pacer({ fixedRate: 2, clock }));
    const starts: number[] = [];
    for (let i = 0; i < 4; i++) {
      await send(GET);
      starts.push(clock.now());
    }
    expect(starts).toEqual([1000, 1500, 2000, 2500]);
  });

  it('does not wait when unlimited; a 429 holds every later request for its Retry-After', async () => {
    const clock = fakeClock();
    const pacer = new Pacer({ clock });
    const send = withPacer(answer([ok, ok, ok, status(429, 3), ok, status(429, 1), ok]), pacer);
    for (let i = 0; i < 3; i++) await send(GET);
    expect(clock.now()).toBe(1000);
    await expect(send(GET)).rejects.toMatchObject({ status: 429 });
    await send(GET);
    // Retry-After 3 s plus the spread (half of its quarter with this clock's random).
    expect(clock.now()).toBe(4375);
    // Three answers before it: enough to learn from, so the gate now paces instead of letting all through.
    expect(Number.isFinite(pacer.rate)).toBe(true);
  });

  it('draws the jitter once per pause: the 429s of requests in flight when it began extend it to their own wait, no further', async () => {
    let t = 1000;
    const draws = [0, 0.99, 0.99, 0.99];
    const clock = { now: () => t, sleep: async (ms: number) => void (t += ms), random: () => draws.shift() ?? 0.99 };
    const pacer = new Pacer({ clock });
    const send = withPacer(answer([status(429, 1), status(429, 1), status(429, 1), status(429, 1), ok]), pacer);
    // Four requests in flight at once, all answered 429 Retry-After: 1 at t = 1000.
    const four = await Promise.allSettled([send(GET), send(GET), send(GET), send(GET)]);
    expect(four.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected', 'rejected']);
    await send(GET);
    // 1 s plus the first 429's draw (0): not 1 s plus the largest of four draws (0.99 of the spread).
    expect(t).toBe(2000);
  });

  it('a 429 with too few answers to learn from only pauses: one write does not slow the run to a crawl', async () => {
    const clock = fakeClock();
    const pacer = new Pacer({ clock });
    const send = withPacer(answer([status(429, 2), ok, ok]), pacer);
    await expect(send(GET)).rejects.toMatchObject({ status: 429 });
    await send(GET);
    await send(GET);
    expect(clock.now()).toBe(3250);
    expect(pacer.rate).toBe(Number.POSITIVE_INFINITY);
  });

  it('a 503 with Retry-After holds every later request for it too, but does not lower the rate (it says nothing of our rate)', async () => {
    const clock = fakeClock();
    const pacer = new Pacer({ clock });
    // Three answers first: enough to learn from, so a 429 here would have slowed the gate (see above).
    const send = withPacer(answer([ok, ok, ok, status(503, 3), ok]), pacer);
    for (let i = 0; i < 3; i++) await send(GET);
    await expect(send(GET)).rejects.toMatchObject({ status: 503 });
    await send(GET);
    expect(clock.now()).toBe(4375);
    expect(pacer.rate).toBe(Number.POSITIVE_INFINITY);
  });

  it('a 503 without Retry-After holds no other request: it names no time', async () => {
    const clock = fakeClock();
    const pacer = new Pacer({ clock });
    const send = withPacer(answer([status(503), ok]), pacer);
    await expect(send(GET)).rejects.toMatchObject({ status: 503 });
    await send(GET);
    expect(clock.now()).toBe(1000);
  });

  it('in simulated time, a 503 with Retry-After to one request pauses the others of the client (each retrying under its own policy)', async () => {
    const clock = simClock(2);
    const sent: Array<{ path: string; at: number }> = [];
    let first = true;
    const next: Send = async (req) => {
      sent.push({ path: req.path, at: clock.now() });
      await clock.sleep(5);
      if (first) {
        first = false;
        throw status(503, 5);
      }
      return ok;
    };
    const send = withRetry(withPacer(next, new Pacer({ clock })), { clock });
    const a = send({ ...GET, path: '/a' });
    const b = clock.sleep(100).then(() => send({ ...GET, path: '/b' }));
    await clock.run(Promise.all([a, b]));
    // /b, started at 100 ms, left only after the 5 s pause (plus its spread below 1 s) that /a's 503 set.
    const bAt = sent.find((s) => s.path === '/b')!.at;
    expect(bAt).toBeGreaterThanOrEqual(5005);
    expect(bAt).toBeLessThan(6005);
    expect(sent.map((s) => s.path).sort()).toEqual(['/a', '/a', '/b']);
  });

  it('throws Interrupted instead of sending when the request was aborted while it waited', async () => {
    const clock = fakeClock();
    const pacer = new Pacer({ clock, fixedRate: 1 });
    let sent = 0;
    const send = withPacer(async () => {
      sent++;
      return ok;
    }, pacer);
    await send(GET);
    const controller = new AbortController();
    controller.abort();
    await expect(send({ ...GET, signal: controller.signal })).rejects.toMatchObject({ exitCode: 130 });
    expect(sent).toBe(1);
  });
});
