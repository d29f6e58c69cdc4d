import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/errors.js';
import type { HttpRequest, HttpResponse, Send } from '../../src/http/core.js';
import { createRateLimiter } from '../../src/http/rate-limit.js';
import { classifyFailure, DEFAULT_RETRY, retryDelay, withRetry } from '../../src/http/retry.js';

const GET: HttpRequest = { method: 'GET', path: '/x' };
const POST: HttpRequest = { method: 'POST', path: '/x', body: {} };
const status = (s: number, retryAfter?: number) => new ApiError(`${s}`, { method: 'GET', url: 'u', status: s, retryAfter });
const network = (code: string) => new ApiError(code, { method: 'GET', url: 'u', code });
const half = () => 0.5;

describe('retry decisions', () => {
  it('retries GET on 5xx, 429 and network errors with full-jitter backoff', () => {
    expect(retryDelay(status(500), GET, 1, DEFAULT_RETRY, half)).toBe(250);
    expect(retryDelay(status(502), GET, 2, DEFAULT_RETRY, half)).toBe(500);
    expect(retryDelay(status(429), GET, 3, DEFAULT_RETRY, () => 0.999)).toBe(1998);
    expect(retryDelay(network('ECONNRESET'), GET, 1, DEFAULT_RETRY, half)).toBe(250);
    expect(retryDelay(network('UND_ERR_HEADERS_TIMEOUT'), GET, 1, DEFAULT_RETRY, () => 0)).toBe(0);
  });

  it('never retries 400/401/403/404 or permanent network failures', () => {
    for (const s of [400, 401, 403, 404, 409, 422, 301]) expect(retryDelay(status(s), GET, 1, DEFAULT_RETRY, half)).toBeUndefined();
    expect(retryDelay(network('ENOTFOUND'), GET, 1, DEFAULT_RETRY, half)).toBeUndefined();
    expect(retryDelay(new Error('bug'), GET, 1, DEFAULT_RETRY, half)).toBeUndefined();
  });

  it('honours Retry-After on 429 and 503, and gives up when it is too long', () => {
    expect(retryDelay(status(429, 3), GET, 1, DEFAULT_RETRY, half)).toBe(3000);
    expect(retryDelay(status(503, 2), GET, 1, DEFAULT_RETRY, half)).toBe(2000);
    expect(retryDelay(status(500, 9), GET, 1, DEFAULT_RETRY, half)).toBe(250);
    expect(retryDelay(status(429, 61), GET, 1, DEFAULT_RETRY, half)).toBeUndefined();
  });

  it('retries POST only when retrySafe, or when it never reached the server', () => {
    expect(retryDelay(status(503), POST, 1, DEFAULT_RETRY, half)).toBeUndefined();
    expect(retryDelay(network('ECONNRESET'), POST, 1, DEFAULT_RETRY, half)).toBeUndefined();
    expect(retryDelay(status(503), { ...POST, retrySafe: true }, 1, DEFAULT_RETRY, half)).toBe(250);
    expect(retryDelay(network('ECONNREFUSED'), POST, 1, DEFAULT_RETRY, half)).toBe(250);
  });

  it('stops at maxTries and when noRetry is set', () => {
    expect(retryDelay(status(500), GET, 4, DEFAULT_RETRY, half)).toBeUndefined();
    expect(retryDelay(status(500), GET, 2, { ...DEFAULT_RETRY, maxTries: 2 }, half)).toBeUndefined();
    expect(retryDelay(status(500), { ...GET, noRetry: true }, 1, DEFAULT_RETRY, half)).toBeUndefined();
  });

  it('classifies failures for the import engine', () => {
    expect(classifyFailure(network('ECONNREFUSED'))).toBe('not-sent');
    expect(classifyFailure(network('ECONNRESET'))).toBe('uncertain');
    expect(classifyFailure(status(200))).toBe('uncertain');
    expect(classifyFailure(status(429))).toBe('retry-later');
    expect(classifyFailure(status(503))).toBe('retry-later');
    expect(classifyFailure(status(404))).toBe('rejected');
    expect(classifyFailure(new Error('x'))).toBe('other');
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

  it('waits the decided delays, then returns the success', async () => {
    const waits: number[] = [];
    const fake = replay([status(503, 2), status(500), ok]);
    const send = withRetry(fake.send, { sleep: async (ms) => void waits.push(ms), random: half });
    await expect(send(GET)).resolves.toBe(ok);
    expect(waits).toEqual([2000, 500]);
    expect(fake.calls()).toBe(3);
  });

  it('rethrows the last error after maxTries', async () => {
    const last = status(502);
    const fake = replay([status(500), status(500), last, ok]);
    const send = withRetry(fake.send, { sleep: async () => {}, random: half, policy: { maxTries: 3 } });
    await expect(send(GET)).rejects.toBe(last);
    expect(fake.calls()).toBe(3);
  });

  it('sends a 404 once', async () => {
    const fake = replay([status(404), ok]);
    const send = withRetry(fake.send, { sleep: async () => {}, random: half });
    await expect(send(GET)).rejects.toMatchObject({ status: 404 });
    expect(fake.calls()).toBe(1);
  });
});

describe('rate limiter (token bucket, fake clock)', () => {
  function fakeClock() {
    let t = 1000;
    const sleep = async (ms: number) => {
      t += ms;
    };
    return { now: () => t, sleep, at: () => t };
  }

  it('spaces requests at the set rate', async () => {
    const clock = fakeClock();
    const limiter = createRateLimiter({ rate: 2, now: clock.now, sleep: clock.sleep });
    const starts: number[] = [];
    for (let i = 0; i < 4; i++) {
      await limiter.acquire();
      starts.push(clock.at());
    }
    expect(starts).toEqual([1000, 1500, 2000, 2500]);
  });

  it('allows a burst, then spaces', async () => {
    const clock = fakeClock();
    const limiter = createRateLimiter({ rate: 1, burst: 3, now: clock.now, sleep: clock.sleep });
    const starts: number[] = [];
    for (let i = 0; i < 5; i++) {
      await limiter.acquire();
      starts.push(clock.at());
    }
    expect(starts).toEqual([1000, 1000, 1000, 2000, 3000]);
  });

  it('does not wait when off, holds everything during pause(), and adapts with setRate()', async () => {
    const clock = fakeClock();
    const limiter = createRateLimiter({ now: clock.now, sleep: clock.sleep });
    await limiter.acquire();
    await limiter.acquire();
    expect(clock.at()).toBe(1000);
    limiter.pause(3000);
    await limiter.acquire();
    expect(clock.at()).toBe(4000);
    limiter.setRate(0.5);
    expect(limiter.rate).toBe(0.5);
    await limiter.acquire();
    await limiter.acquire();
    expect(clock.at()).toBe(6000);
    limiter.setRate(undefined);
    await limiter.acquire();
    expect(clock.at()).toBe(6000);
  });
});
