// The retry policy of one write in an unattended run (the import's rows): it must end, since a CI job
// waits for no one, and it must land once. 429s are waited for at the rate gate's pace, but only for
// `giveUpAfterMs`; a service that cannot be reached (not sent, 503) gets `unreachableAfterMs` of grace;
// a try that may have been applied is never repeated blindly: the caller's `settle` reads whether it was
// (spec 4.3 rule 4: a repeat may create another card), and only then is it sent again, up to `maxTries`.
import type { Clock } from '../clock.js';
import { ApiError } from '../errors.js';
import { type Backoff, backoffMs, classify, retryWaitMs } from './failure.js';
import type { RetryDecision, RetryInfo, RetryPolicy } from './types.js';

/** Why a write policy ended a request; the caller words it. `forMs`: how long the run has met that failure. */
export type WriteStop =
  /** Nothing but 429s for `giveUpAfterMs`. */
  | { kind: 'throttled'; err: ApiError; forMs: number }
  /** A 429's Retry-After (`askedMs`, floored) longer than what `giveUpAfterMs` leaves: waiting could not end in time. */
  | { kind: 'throttled-wait'; err: ApiError; forMs: number; askedMs: number }
  /** Not sent, or 503, for the whole grace (or a failure that cannot heal); `askedMs`: a 503's Retry-After past the grace. */
  | { kind: 'unreachable'; err: ApiError; forMs: number; askedMs?: number }
  /** May have been applied, not found by `settle`, and out of tries (`tries`, 429s not counted) or unable to heal. */
  | { kind: 'gave-up'; err: ApiError; tries: number };

/** The error a write policy ends a request with (never the server's refusal, which is rethrown as it is). */
export class WriteStopped extends Error {
  constructor(readonly why: WriteStop) {
    super(why.err.message, { cause: why.err });
    this.name = 'WriteStopped';
  }
}

/** The limits of a write policy and the caller's hooks. */
export interface WritePolicyOptions {
  clock: Pick<Clock, 'now' | 'random'>;
  /**
   * Tries in all, 429s not counted: past them a failure that may have been applied is not sent again.
   * Failures that were not applied (refused, 503) count, but end only with the grace.
   */
  maxTries: number;
  /** How long the write may meet nothing but 429s. */
  giveUpAfterMs: number;
  /** How long the write may fail to reach the service (refused, DNS, reset before sending, 503). */
  unreachableAfterMs: number;
  backoff?: Backoff;
  /**
   * After a failure that may have been applied: learn whether it was. 'repeat' when the write was not
   * applied (it is then sent again, tries left), else the error to end the request with.
   */
  settle(err: ApiError): Promise<'repeat' | { stop: unknown }>;
  /** Right before each try leaves (see RetryPolicy). */
  beforeTry?: () => Promise<void> | undefined;
  /** Before each wait (see RetryPolicy). */
  onRetry?: (info: RetryInfo) => void;
}

/** Backoff between tries of a write: 200 ms, doubling, at most 8 s (full jitter, failure.ts). */
const WRITE_BACKOFF: Backoff = { baseMs: 200, maxMs: 8000 };

const stop = (why: WriteStop): RetryDecision => ({ stop: new WriteStopped(why) });

/** A write policy for one request: its 429 and unreachable clocks start at its first such failure. */
export function writePolicy(opts: WritePolicyOptions): RetryPolicy {
  let throttledSince: number | undefined;
  let unreachableSince: number | undefined;
  const backoff = opts.backoff ?? WRITE_BACKOFF;
  return {
    beforeTry: opts.beforeTry,
    onRetry: opts.onRetry,
    async decide(err, tries) {
      if (!(err instanceof ApiError)) return { stop: err };
      const failure = classify(err);
      const now = opts.clock.now();
      const counted = tries.made - tries.throttled;
      if (err.status === 429) {
        // Nothing was applied, and the rate gate has paused every worker for the Retry-After: the gate
        // holds the next try, no wait here. A 429 is the pacing working, not a failing write: not counted.
        throttledSince ??= now;
        const forMs = now - throttledSince;
        if (forMs >= opts.giveUpAfterMs) return stop({ kind: 'throttled', err, forMs });
        // A wait longer than what is left cannot end in time: stop now, not days later.
        const asked = failure.retryAfterMs;
        if (asked !== undefined && asked > opts.giveUpAfterMs - forMs) return stop({ kind: 'throttled-wait', err, forMs, askedMs: asked });
        return { wait: 0, throttled: true };
      }
      if (failure.kind === 'refused') return { stop: err };
      if (failure.kind === 'not-sent' || failure.kind === 'retryable') {
        // Nothing was applied, and the server did not refuse the write: the service is away, not the
        // write wrong. Past the grace the request ends; a 503 whose Retry-After outlasts it ends at once.
        unreachableSince ??= now;
        const forMs = now - unreachableSince;
        if (!failure.heals || forMs >= opts.unreachableAfterMs) return stop({ kind: 'unreachable', err, forMs });
        const asked = failure.retryAfterMs;
        if (asked !== undefined && asked > opts.unreachableAfterMs - forMs) return stop({ kind: 'unreachable', err, forMs, askedMs: asked });
        // A 503 waits its Retry-After (at least the floor) here; with one, the gate pauses the other writes too.
        return { wait: retryWaitMs(failure, backoffMs(counted, backoff, opts.clock.random), opts.clock.random) };
      }
      // Maybe applied (500, 502, 504, a 2xx without `_id`, a reset or a timeout after sending): read
      // before anything else is sent, even when no try is left (a write found is not a failure).
      unreachableSince = undefined;
      const settled = await opts.settle(err);
      if (settled !== 'repeat') return settled;
      if (counted >= opts.maxTries || !failure.heals) return stop({ kind: 'gave-up', err, tries: counted });
      return { wait: backoffMs(counted, backoff, opts.clock.random) };
    },
  };
}
