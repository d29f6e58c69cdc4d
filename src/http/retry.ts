import { realClock, type Clock } from '../clock.js';
import { ApiError, CancelledError } from '../errors.js';
import type { HttpRequest, Send } from './core.js';
import { backoffMs, classify, mayRepeat, RATE_LIMIT_HINT, RETRY_FLOOR_MS, retryWaitMs, waitText } from './failure.js';

/**
 * How hard to retry. Failures other than the service's "come back later" count against `maxTries`; a
 * rate limit (any 429, or a 503 with Retry-After) against a waiting budget instead: `maxWaitMs` of
 * waiting in all since the client's last request that got through (see `RetryState`).
 */
export interface RetryPolicy {
  /** Tries in all (first included) for failures other than a rate limit. */
  maxTries: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** Waiting for rate limits (the Retry-Afters asked, else the backoffs), summed since the last answer that got through. */
  maxWaitMs: number;
  /** Tries of one request answered only with rate limits (a `Retry-After: 0` loop cannot spin forever). */
  maxThrottledTries: number;
}

/**
 * Defaults suited to a CLI: 4 tries, 500 ms doubling up to 8 s; rate limits waited for up to 60 s in all
 * (the service's own windows are a minute: 120 requests/min per API key), at most 50 tries of one request.
 */
export const DEFAULT_RETRY: RetryPolicy = { maxTries: 4, baseDelayMs: 500, maxDelayMs: 8000, maxWaitMs: 60_000, maxThrottledTries: 50 };

/** What the retry wrapper keeps between tries: rate-limited tries of this request, and the client's wait since its last success. */
export interface RetryState {
  throttledTries: number;
  waitedMs: number;
}

/** A rate limit: the service said it did nothing because of load (429 always; 503 when it names a Retry-After). */
export function isRateLimit(err: unknown): err is ApiError {
  return err instanceof ApiError && (err.status === 429 || (err.status === 503 && err.retryAfter !== undefined));
}

/** What a wait costs of the budget: the server's Retry-After raised to the floor (our spread of it is free), else the whole wait. */
function budgeted(askedMs: number | undefined, waitMs: number): number {
  return askedMs ?? waitMs;
}

/**
 * The retry decision: milliseconds to wait before the next try, or undefined to give up. What may be
 * repeated is the failure policy's (failure.ts); this adds the budgets. `attempt` counts the tries made
 * so far (1 after the first); `random` is in [0, 1). A rate limit waits its Retry-After (without one:
 * jittered backoff, so processes throttled together spread out) while the waiting budget lasts.
 */
export function retryDelay(
  err: unknown,
  req: HttpRequest,
  attempt: number,
  policy: RetryPolicy,
  random: () => number,
  state: RetryState = { throttledTries: 0, waitedMs: 0 },
): number | undefined {
  if (req.noRetry || !(err instanceof ApiError)) return undefined;
  const failure = classify(err);
  if (!mayRepeat(failure, req.method === 'GET' || req.retrySafe === true)) return undefined;
  const bounds = { baseMs: policy.baseDelayMs, maxMs: policy.maxDelayMs };
  if (isRateLimit(err)) {
    if (state.throttledTries + 1 >= policy.maxThrottledTries) return undefined;
    // Processes throttled together are told the same Retry-After: the jitter of retryWaitMs spreads them,
    // so they do not all come back in the same instant and meet a 429 again; never less than the floor.
    const wait = retryWaitMs(failure, backoffMs(state.throttledTries + 1, bounds, random), random);
    return state.waitedMs + budgeted(failure.retryAfterMs, wait) > policy.maxWaitMs ? undefined : wait;
  }
  if (attempt - state.throttledTries >= (req.maxTries ?? policy.maxTries)) return undefined;
  return retryWaitMs(failure, backoffMs(attempt - state.throttledTries, bounds, random), random);
}

/**
 * The error of a rate-limited request the command stops waiting for, naming the wait and the limit;
 * undefined for any other failure (rethrown as it is). Three ways to stop: the server asks for longer
 * than a command waits at all (at once, with its wait: not sleeping for days), the budget is spent, or
 * the try cap is reached.
 */
function stopWaiting(err: unknown, policy: RetryPolicy, state: RetryState): ApiError | undefined {
  if (!isRateLimit(err)) return undefined;
  const asked = classify(err).retryAfterMs;
  const budget = waitText(policy.maxWaitMs);
  let why: string;
  if (asked !== undefined && asked > policy.maxWaitMs) {
    why = `the server asks to wait ${waitText(asked)} (Retry-After), longer than the ${budget} a command waits: stopped.`;
  } else if (state.throttledTries + 1 >= policy.maxThrottledTries) {
    why = `still rate-limited after ${state.throttledTries + 1} tries: stopped.`;
  } else {
    const more = asked === undefined ? '' : ` and asks for ${waitText(asked)} more`;
    why = `waited ${waitText(state.waitedMs)} in all for the service${more}; a command waits at most ${budget}: stopped.`;
  }
  const { method, url, status, serverMessage, retryAfter } = err;
  const hint = status === 429 ? RATE_LIMIT_HINT : (err.hint ?? 'Try again later.');
  return new ApiError(`${err.message}; ${why}`, { method, url, status, serverMessage, retryAfter }, { hint, cause: err });
}

/** Hooks and the clock of the retry wrapper; tests inject a simulated clock. */
export interface RetryOptions {
  policy?: Partial<RetryPolicy>;
  clock?: Clock;
  /** Called before each wait (the verbose log). */
  onRetry?: (info: { err: ApiError; attempt: number; delayMs: number; req: HttpRequest }) => void;
  /** Called before each wait for a rate limit, with the line a person reads (the command prints it unless --quiet). */
  onWait?: (line: string) => void;
}

/** Whole seconds as the server gives them (`3s`, `1m`); a jittered wait to a tenth (`1.4s`, not a rounded-up `2s`). */
function secondsText(ms: number): string {
  return ms === 0 ? '0s' : ms % 1000 === 0 ? waitText(ms) : `${Math.ceil(ms / 100) / 10}s`;
}

/**
 * `Rate limited (429); waiting 3.4s as the service asked (Retry-After: 3s, plus jitter), then trying again…`;
 * a Retry-After below the floor (0, a date past) says the floor was waited instead.
 */
export function waitLine(err: ApiError, delayMs: number): string {
  const what = err.status === 429 ? 'Rate limited (429)' : `Service unavailable (${err.status})`;
  const asked = err.retryAfter === undefined ? undefined : err.retryAfter * 1000;
  const floor = waitText(RETRY_FLOOR_MS);
  const why =
    asked === undefined
      ? ''
      : asked < RETRY_FLOOR_MS
        ? ` (Retry-After: ${secondsText(asked)}; cardboard waits at least ${floor}${delayMs > RETRY_FLOOR_MS ? ', plus jitter' : ''})`
        : ` as the service asked (Retry-After: ${secondsText(asked)}${delayMs > asked ? ', plus jitter' : ''})`;
  return `${what}; waiting ${secondsText(delayMs)}${why}, then trying again…`;
}

/**
 * Wrap `next` with the retry policy; the last error is rethrown unchanged when retries run out, but for
 * a rate limit, which ends with an error naming the wait and the limit. The waiting budget belongs to
 * the client (one per command): it sums every rate-limit wait since the last request that got through,
 * so a listing of many pages may wait longer in all, but never `maxWaitMs` without progress.
 */
export function withRetry(next: Send, options: RetryOptions = {}): Send {
  const policy = { ...DEFAULT_RETRY, ...options.policy };
  const clock = options.clock ?? realClock;
  let waitedMs = 0;
  const withTries: Send = async (req) => {
    let throttledTries = 0;
    for (let attempt = 1; ; attempt++) {
      try {
        const res = await next(req);
        waitedMs = 0;
        return res;
      } catch (err) {
        const state = { throttledTries, waitedMs };
        const wait = retryDelay(err, req, attempt, policy, clock.random, state);
        if (wait === undefined) throw stopWaiting(err, policy, state) ?? err;
        options.onRetry?.({ err: err as ApiError, attempt, delayMs: wait, req });
        if (isRateLimit(err)) {
          throttledTries++;
          waitedMs += budgeted(classify(err).retryAfterMs, wait);
          options.onWait?.(waitLine(err, wait));
        }
        // A wait before a try that has not left: the waiting signal ends it (no new work), as the run's stop does.
        const waiting = req.waitSignal ?? req.signal;
        await clock.sleep(wait, waiting);
        if (waiting?.aborted) throw new CancelledError('Interrupted.', { cause: waiting.reason });
      }
    }
  };
  // The caller owns the retry policy (the import engine): no try/catch frame around its requests.
  return (req) => (req.noRetry ? next(req) : withTries(req));
}
