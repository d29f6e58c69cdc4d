// The one retry loop of cardboard. What a failed try means and how long to wait is a policy's (a value
// with `decide`), chosen per request like octokit's per-request retry options: a command's policy by
// default (command-policy.ts), the import's write policy for its rows (write-policy.ts), the app policy
// for forwards to the user's own app (app-policy.ts). `retrying` below is the only place that repeats a
// request, sleeps between tries, counts them and calls the hooks; `withRetry` puts it in the service's chain.
import { realClock, type Clock } from '../clock.js';
import { ApiError, CancelledError } from '../errors.js';
import { commandPolicy, DEFAULT_RETRY, type RetryLimits } from './command-policy.js';
import { afterTries } from './error-words.js';
import type { HttpRequest, RetryInfo, RetryPolicy, Send, Tries } from './types.js';

export type { RetryDecision, RetryInfo, RetryPolicy, Tries } from './types.js';

/** No repeat at all: a request whose answer is optional (the next page a table's footer peeks at) fails at its first error. */
export const NO_RETRY: RetryPolicy = { decide: (err) => ({ stop: err }) };

/** Hooks, limits and the clock of the retry wrapper; tests inject a simulated clock. */
export interface RetryOptions {
  /** The limits of the client's default policy (a command's). */
  limits?: Partial<RetryLimits>;
  clock?: Clock;
  /** Called before each wait (the verbose log). */
  onRetry?: (info: RetryInfo) => void;
  /** Called with the line a person reads before a wait the policy says so of (a command's rate-limit waits). */
  onWait?: (line: string) => void;
}

/** What the loop needs besides the request and its policy: the clock it sleeps on, and the client's hooks. */
interface RetryLoop<Req = HttpRequest> {
  clock: Pick<Clock, 'sleep'>;
  onRetry?: (info: RetryInfo<Req>) => void;
  onWait?: (line: string) => void;
}

/**
 * The one retry loop: send `req` through `next` until it gets an answer or `policy` stops it. A wait between
 * tries ends with `waits` (a try that has left is awaited: only the request's own signal ends it), and no
 * try starts once `waits` has aborted (CancelledError).
 */
export async function retrying<Req, Res>(next: (req: Req) => Promise<Res>, req: Req, policy: RetryPolicy<Req>, waits: AbortSignal | undefined, loop: RetryLoop<Req>): Promise<Res> {
  // Made at the first failed try: most requests succeed at once.
  let tries: Tries | undefined;
  // Tries cut off by the timeout: the last error names them (afterTries).
  let timedOut = 0;
  for (let attempt = 1; ; attempt++) {
    const ready = policy.beforeTry?.();
    if (ready) await ready;
    if (waits?.aborted) throw new CancelledError('Interrupted.', { cause: waits.reason });
    try {
      const res = await next(req);
      policy.succeeded?.();
      return res;
    } catch (err) {
      tries ??= { made: 0, throttled: 0 };
      tries.made = attempt;
      if (err instanceof ApiError && err.timeoutMs !== undefined) timedOut++;
      const decision = await policy.decide(err, tries, req);
      if ('stop' in decision) throw afterTries(decision.stop, attempt, timedOut);
      if (err instanceof ApiError) {
        const info: RetryInfo<Req> = { err, attempt, counted: attempt - tries.throttled, delayMs: decision.wait, req };
        loop.onRetry?.(info);
        policy.onRetry?.(info);
      }
      if (decision.notice !== undefined) loop.onWait?.(decision.notice);
      if (decision.throttled) tries.throttled++;
      await loop.clock.sleep(decision.wait, waits);
    }
  }
}

/**
 * Wrap `next` with the one retry loop: each request is repeated as its policy (`req.retry`, else the
 * client's default, a command's) decides. A wait between tries ends with the request's signal, or without
 * one with its wait signal (a try that has left is awaited: only `signal` ends it); no try starts once
 * that signal has aborted (CancelledError). The client's default policy is one per client: its waiting
 * budget counts every rate-limit wait since the last request that got through.
 */
export function withRetry(next: Send, options: RetryOptions = {}): Send {
  const clock = options.clock ?? realClock;
  const fallback = commandPolicy({ ...DEFAULT_RETRY, ...options.limits }, clock.random);
  const loop: RetryLoop = { clock, onRetry: options.onRetry, onWait: options.onWait };
  // Waits before a try end with the wait signal (no new work), else the request's own.
  return (req) => retrying(next, req, req.retry ?? fallback, req.waitSignal ?? req.signal, loop);
}
