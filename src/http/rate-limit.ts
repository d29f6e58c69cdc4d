import { setTimeout as delay } from 'node:timers/promises';
import { CancelledError } from '../errors.js';
import type { Send } from './core.js';

/** A process-wide limiter every request passes through (issue 3 §1: 429s are the exception, not the control loop). */
export interface RateLimiter {
  /** Wait for this request's turn: the rate (when set) and any pause. */
  acquire(signal?: AbortSignal): Promise<void>;
  /** True when a request may start now without waiting (no rate set, no pause): lets the wrapper skip acquire(). */
  idle?(): boolean;
  /** Hold every request for `ms` from now (e.g. after a 429 with Retry-After); never shortens a pause. */
  pause(ms: number): void;
  /** Change the rate in requests per second for requests not yet started; undefined turns limiting off. */
  setRate(perSecond: number | undefined): void;
  /** The current rate in requests per second, or undefined when off. */
  readonly rate: number | undefined;
}

/** Clock, sleep and burst for the limiter; tests pass a fake clock whose sleep advances it. */
export interface RateLimiterOptions {
  rate?: number;
  /** Requests allowed back to back before spacing applies (default 1: evenly spaced). */
  burst?: number;
  now?: () => number;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/**
 * A token bucket in its GCRA form: each request reserves the next free slot, so concurrent
 * callers are served in arrival order without polling. Off (no spacing) until a rate is set;
 * pause() applies either way.
 */
export function createRateLimiter(options: RateLimiterOptions = {}): RateLimiter {
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? ((ms: number, signal?: AbortSignal) => delay(ms, undefined, { signal }));
  const burst = Math.max(1, options.burst ?? 1);
  let rate = options.rate;
  let tat = 0; // theoretical arrival time of the next request
  let pausedUntil = 0;

  async function wait(ms: number, signal?: AbortSignal): Promise<void> {
    if (ms <= 0) return;
    try {
      await sleep(ms, signal);
    } catch (err) {
      throw new CancelledError('Interrupted.', { cause: err });
    }
  }

  return {
    get rate() {
      return rate;
    },
    setRate(perSecond) {
      rate = perSecond !== undefined && perSecond > 0 ? perSecond : undefined;
    },
    pause(ms) {
      pausedUntil = Math.max(pausedUntil, now() + ms);
    },
    idle: () => rate === undefined && pausedUntil <= now(),
    async acquire(signal) {
      for (;;) {
        const t = now();
        let start = Math.max(t, pausedUntil);
        if (rate !== undefined) {
          const interval = 1000 / rate;
          start = Math.max(start, tat - (burst - 1) * interval);
          tat = Math.max(tat, start) + interval;
        }
        await wait(start - t, signal);
        // A pause that began while we waited holds this request too.
        if (pausedUntil <= now()) return;
      }
    },
  };
}

/** Wrap `next` so every try (retries included) waits for the limiter first. */
export function withRateLimit(next: Send, limiter: RateLimiter): Send {
  // Unlimited and not paused (an import against an unthrottled service): no await per request.
  return (req) => (limiter.idle?.() ? next(req) : limiter.acquire(req.signal).then(() => next(req)));
}
