import { realClock, type Clock } from '../clock.js';
import { ApiError, CancelledError } from '../errors.js';
import type { HttpRequest, Send } from './core.js';
import { backoffMs, classify, mayRepeat, waitText } from './failure.js';

/** How hard to retry: tries in all (first included), exponential backoff bounds, longest Retry-After we wait. */
export interface RetryPolicy {
  maxTries: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** A Retry-After longer than this is not waited for: the error is shown instead. */
  maxRetryAfterMs: number;
}

/** Defaults suited to a CLI: 4 tries, 500 ms doubling up to 8 s, Retry-After honoured up to 60 s. */
export const DEFAULT_RETRY: RetryPolicy = { maxTries: 4, baseDelayMs: 500, maxDelayMs: 8000, maxRetryAfterMs: 60_000 };

/**
 * The retry decision: milliseconds to wait before the next try, or undefined to give up. What may be
 * repeated is the failure policy's (failure.ts); this adds the try budget and the Retry-After ceiling.
 * `attempt` counts the tries made so far (1 after the first); `random` is in [0, 1).
 */
export function retryDelay(err: unknown, req: HttpRequest, attempt: number, policy: RetryPolicy, random: () => number): number | undefined {
  if (req.noRetry || attempt >= (req.maxTries ?? policy.maxTries) || !(err instanceof ApiError)) return undefined;
  const failure = classify(err);
  if (!mayRepeat(failure, req.method === 'GET' || req.retrySafe === true)) return undefined;
  if (failure.retryAfterMs !== undefined) return failure.retryAfterMs > policy.maxRetryAfterMs ? undefined : failure.retryAfterMs;
  return backoffMs(attempt, { baseMs: policy.baseDelayMs, maxMs: policy.maxDelayMs }, random);
}

/**
 * The error of a request whose server asks to wait (Retry-After) longer than a command waits: it stops
 * at once, saying so, instead of sleeping for days; undefined for any other failure.
 */
function tooLongToWait(err: unknown, policy: RetryPolicy): ApiError | undefined {
  if (!(err instanceof ApiError)) return undefined;
  const asked = classify(err).retryAfterMs;
  if (asked === undefined || asked <= policy.maxRetryAfterMs) return undefined;
  const { method, url, status, serverMessage, retryAfter } = err;
  return new ApiError(
    `${err.message}; the server asks to wait ${waitText(asked)} (Retry-After), longer than the ${waitText(policy.maxRetryAfterMs)} a command waits: stopped.`,
    { method, url, status, serverMessage, retryAfter },
    { hint: err.hint ?? 'Try again later.', cause: err },
  );
}

/** Hooks and the clock of the retry wrapper; tests inject a simulated clock. */
export interface RetryOptions {
  policy?: Partial<RetryPolicy>;
  clock?: Clock;
  /** Called before each wait (the verbose log). */
  onRetry?: (info: { err: ApiError; attempt: number; delayMs: number; req: HttpRequest }) => void;
}

/** Wrap `next` with the retry policy; the last error is rethrown unchanged when retries run out. */
export function withRetry(next: Send, options: RetryOptions = {}): Send {
  const policy = { ...DEFAULT_RETRY, ...options.policy };
  const clock = options.clock ?? realClock;
  const withTries: Send = async (req) => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await next(req);
      } catch (err) {
        const wait = retryDelay(err, req, attempt, policy, clock.random);
        if (wait === undefined) throw tooLongToWait(err, policy) ?? err;
        options.onRetry?.({ err: err as ApiError, attempt, delayMs: wait, req });
        await clock.sleep(wait, req.signal);
        if (req.signal?.aborted) throw new CancelledError('Interrupted.', { cause: req.signal.reason });
      }
    }
  };
  // The caller owns the retry policy (the import engine): no try/catch frame around its requests.
  return (req) => (req.noRetry ? next(req) : withTries(req));
}
