// The default retry policy, a command's: a person waits at the terminal, so failures get a few quick
// tries and the service's "come back later" a budget of a minute of waiting, said on stderr each time.
import { ApiError } from '../errors.js';
import { backoffMs, classify, mayRepeat, RATE_LIMIT_HINT, RETRY_FLOOR_MS, retryWaitMs, waitText } from './failure.js';
import type { HttpRequest, RetryPolicy } from './types.js';
import { plural } from '../io/text.js';

/**
 * How hard a command retries. Failures other than the service's "come back later" count against `maxTries`; a
 * rate limit (any 429, or a 503 with Retry-After) against a waiting budget instead: `maxWaitMs` of
 * waiting in all since the client's last request that got through (see `RetryState`).
 */
export interface RetryLimits {
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
export const DEFAULT_RETRY: RetryLimits = { maxTries: 4, baseDelayMs: 500, maxDelayMs: 8000, maxWaitMs: 60_000, maxThrottledTries: 50 };

/** What the command policy decides from: rate-limited tries of this request, and the client's wait since its last success. */
interface RetryState {
  throttledTries: number;
  waitedMs: number;
}

/** A rate limit: the service said it did nothing because of load (429 always; 503 when it names a Retry-After). */
function isRateLimit(err: unknown): err is ApiError {
  return err instanceof ApiError && (err.status === 429 || (err.status === 503 && err.retryAfter !== undefined));
}

/** What a wait costs of the budget: the server's Retry-After raised to the floor (our spread of it is free), else the whole wait. */
function budgeted(askedMs: number | undefined, waitMs: number): number {
  return askedMs ?? waitMs;
}

/**
 * A command's retry decision: milliseconds to wait before the next try, or undefined to give up. What may be
 * repeated is the failure policy's (failure.ts); this adds the budgets. `attempt` counts the tries made
 * so far (1 after the first); `random` is in [0, 1). A rate limit waits its Retry-After (without one:
 * jittered backoff, so processes throttled together spread out) while the waiting budget lasts.
 */
export function retryDelay(
  err: unknown,
  req: HttpRequest,
  attempt: number,
  limits: RetryLimits,
  random: () => number,
  state: RetryState = { throttledTries: 0, waitedMs: 0 },
): number | undefined {
  if (!(err instanceof ApiError)) return undefined;
  const failure = classify(err);
  // Reads (GET, HEAD) cannot duplicate anything; any other method only when the caller says so.
  if (!mayRepeat(failure, req.method === 'GET' || req.method === 'HEAD' || req.retrySafe === true)) return undefined;
  const bounds = { baseMs: limits.baseDelayMs, maxMs: limits.maxDelayMs };
  if (isRateLimit(err)) {
    if (state.throttledTries + 1 >= limits.maxThrottledTries) return undefined;
    // Processes throttled together are told the same Retry-After: the jitter of retryWaitMs spreads them,
    // so they do not all come back in the same instant and meet a 429 again; never less than the floor.
    const wait = retryWaitMs(failure, backoffMs(state.throttledTries + 1, bounds, random), random);
    return state.waitedMs + budgeted(failure.retryAfterMs, wait) > limits.maxWaitMs ? undefined : wait;
  }
  if (attempt - state.throttledTries >= (req.maxTries ?? limits.maxTries)) return undefined;
  return retryWaitMs(failure, backoffMs(attempt - state.throttledTries, bounds, random), random);
}

/**
 * The error of a rate-limited request the command stops waiting for, naming the wait and the limit;
 * undefined for any other failure (rethrown as it is). Three ways to stop: the server asks for longer
 * than a command waits at all (at once, with its wait: not sleeping for days), the budget is spent, or
 * the try cap is reached.
 */
function stopWaiting(err: unknown, limits: RetryLimits, state: RetryState): ApiError | undefined {
  if (!isRateLimit(err)) return undefined;
  const asked = classify(err).retryAfterMs;
  const budget = waitText(limits.maxWaitMs);
  let why: string;
  if (asked !== undefined && asked > limits.maxWaitMs) {
    why = `the server asks to wait ${waitText(asked)} (Retry-After), longer than the ${budget} a command waits: stopped.`;
  } else if (state.throttledTries + 1 >= limits.maxThrottledTries) {
    why = `still rate-limited after ${plural(state.throttledTries + 1, 'try', 'tries')}: stopped.`;
  } else {
    const more = asked === undefined ? '' : ` and asks for ${waitText(asked)} more`;
    why = `waited ${waitText(state.waitedMs)} in all for the service${more}; a command waits at most ${budget}: stopped.`;
  }
  const { method, url, status, serverMessage, retryAfter } = err;
  const hint = status === 429 ? RATE_LIMIT_HINT : (err.hint ?? 'Try again later.');
  return new ApiError(`${err.message}; ${why}`, { method, url, status, serverMessage, retryAfter }, { hint, cause: err });
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
 * The default policy of a client, one per client (withRetry makes it): a failed try is repeated as
 * retryDelay decides; a rate limit (not counted against `maxTries`) is said to the person waiting and
 * spends the client's waiting budget, which an answer that gets through refills. When it gives up, the
 * last error is rethrown unchanged, but for a rate limit: an error naming the wait and the limit.
 */
export function commandPolicy(limits: RetryLimits, random: () => number): RetryPolicy {
  let waitedMs = 0;
  return {
    decide(err, tries, req) {
      const state = { throttledTries: tries.throttled, waitedMs };
      const wait = retryDelay(err, req, tries.made, limits, random, state);
      if (wait === undefined) return { stop: stopWaiting(err, limits, state) ?? err };
      if (!isRateLimit(err)) return { wait };
      waitedMs += budgeted(classify(err).retryAfterMs, wait);
      return { wait, throttled: true, notice: waitLine(err, wait) };
    },
    succeeded() {
      waitedMs = 0;
    },
  };
}
