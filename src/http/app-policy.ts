// The retry policy of a request to the user's own app: the webhook listener's forwards (--forward-to). The
// forwarder stands in for the service, which sends a delivery again after any answer but a 200, with no
// limit (spec 6), so every failure is tried again, in order, until the app answers 2xx or the forwarder
// stops. How long to wait is failure.ts's, as for every request: the backoff (the tries are counted, so
// it grows to its cap), and for an app that declined (429, 503) at least the retry floor, its Retry-After
// honoured. No rate gate: the app is the user's own, and one forward at a time is in flight.
// `webhook send`, `webhook replay`, the inspector's replay and the tunnel's check try once: each answer
// is what a person asked to see.
import type { Clock } from '../clock.js';
import { ApiError } from '../errors.js';
import { type Backoff, backoffMs, classify, retryWaitMs } from './failure.js';
import { parseRetryAfter } from './message.js';
import type { RetryInfo, RetryPolicy } from './retry.js';
import { displayUrl } from './url.js';

/** Backoff between tries of a forward: 100 ms, doubling, at most 5 s (full jitter, failure.ts). */
export const APP_BACKOFF: Backoff = { baseMs: 100, maxMs: 5000 };

/** What the app policy needs: chance for the jitter, the backoff, when to stop, and the caller's hook. */
interface AppPolicyOptions<Req> {
  clock: Pick<Clock, 'random'>;
  backoff?: Backoff;
  /** Once aborted, a failed try is not repeated (the forwarder is stopping; the forward is sent again on resume). */
  stop: AbortSignal;
  /** Before each wait: the try that failed and the wait decided (the forwarder's event). */
  onRetry?: (info: RetryInfo<Req>) => void;
}

/** The policy of forwards to the app: every failure repeated after failure.ts's wait, until `stop`. */
export function appPolicy<Req>(opts: AppPolicyOptions<Req>): RetryPolicy<Req> {
  const backoff = opts.backoff ?? APP_BACKOFF;
  return {
    onRetry: opts.onRetry,
    decide(err, tries) {
      if (opts.stop.aborted || !(err instanceof ApiError)) return { stop: err };
      return { wait: retryWaitMs(classify(err), backoffMs(tries.made, backoff, opts.clock.random), opts.clock.random) };
    },
  };
}

/** What the app answered one try, as far as the policy reads it. */
interface AppAnswer {
  /** HTTP status; undefined when no answer came. */
  status?: number;
  /** The network error when no answer came (ECONNREFUSED…). */
  error?: string;
  /** The answer's Retry-After header, as it came. */
  retryAfter?: string;
}

/** The error of a try the app did not answer 2xx, for the policy to classify; a Retry-After date is read at `nowMs`. */
export function appFailure(method: string, url: string, answer: AppAnswer, nowMs: number): ApiError {
  const shown = displayUrl(url);
  const { status } = answer;
  const retryAfter = parseRetryAfter(answer.retryAfter, nowMs);
  if (status === undefined) return new ApiError(`${method} ${shown} failed: ${answer.error ?? 'no answer'}`, { method, url: shown, code: answer.error });
  return new ApiError(`${status} from ${method} ${shown}`, { method, url: shown, status, retryAfter });
}
