import { setTimeout as delay } from 'node:timers/promises';
import { ApiError, CancelledError } from '../errors.js';
import type { HttpRequest, Send } from './core.js';

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

/** How a failed request may be treated by a caller that owns its own retry policy (the import engine). */
export type FailureKind =
  /** Never reached the server (refused, DNS, connect timeout): a POST can be repeated without duplicating. */
  | 'not-sent'
  /** Sent, outcome unknown (reset, timeout waiting, 2xx with a bad body): a POST may or may not have happened. */
  | 'uncertain'
  /** Answered 429 or 5xx: nothing was done, probably; retry later (honour retryAfter). */
  | 'retry-later'
  /** Answered another 4xx/3xx: repeating will not help. */
  | 'rejected'
  /** Not an ApiError at all. */
  | 'other';

const TLS = ['CERT_HAS_EXPIRED', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'SELF_SIGNED_CERT_IN_CHAIN', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'ERR_TLS_CERT_ALTNAME_INVALID'];
const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT', ...TLS]);
/** Network failures that will not heal by trying again within seconds. */
const PERMANENT = new Set(['ENOTFOUND', 'UND_ERR_RES_EXCEEDED_MAX_SIZE', 'ERR_BUFFER_TOO_LARGE', 'EUNSUPPORTED_ENCODING', ...TLS]);

/** Classify a failure for callers that decide retries themselves (the import engine). */
export function classifyFailure(err: unknown): FailureKind {
  if (!(err instanceof ApiError)) return 'other';
  if (err.status === undefined) return err.code && NOT_SENT.has(err.code) ? 'not-sent' : 'uncertain';
  if (err.status < 300) return 'uncertain';
  if (err.status === 429 || (err.status >= 500 && err.status !== 501)) return 'retry-later';
  return 'rejected';
}

/**
 * The retry decision: milliseconds to wait before the next try, or undefined to give up.
 * GET (or a POST the caller marked retrySafe) is retried on network errors, 5xx and 429;
 * a POST that never reached the server is retried too, as it cannot duplicate.
 * 400/401/403/404 and other 4xx are never retried. 429 and 503 wait for Retry-After.
 * `attempt` counts the tries made so far (1 after the first); `random` is in [0, 1).
 */
export function retryDelay(err: unknown, req: HttpRequest, attempt: number, policy: RetryPolicy, random: () => number): number | undefined {
  if (req.noRetry || attempt >= policy.maxTries) return undefined;
  const kind = classifyFailure(err);
  const idempotent = req.method === 'GET' || req.retrySafe === true;
  const code = err instanceof ApiError ? err.code : undefined;
  if (code && PERMANENT.has(code)) return undefined;
  const retryable = kind === 'not-sent' || (idempotent && (kind === 'uncertain' || kind === 'retry-later'));
  if (!retryable) return undefined;
  const status = (err as ApiError).status;
  const retryAfter = (err as ApiError).retryAfter;
  if ((status === 429 || status === 503) && retryAfter !== undefined) {
    const ms = retryAfter * 1000;
    return ms > policy.maxRetryAfterMs ? undefined : ms;
  }
  // Exponential backoff with full jitter: spreads retries of many clients over the whole window.
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  return Math.floor(random() * ceiling);
}

/** Hooks and clocks for the retry wrapper; tests inject sleep and random. */
export interface RetryOptions {
  policy?: Partial<RetryPolicy>;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  random?: () => number;
  /** Called before each wait: the verbose log and the rate limiter (a 429 pauses every request). */
  onRetry?: (info: { err: ApiError; attempt: number; delayMs: number; req: HttpRequest }) => void;
}

/** Wrap `next` with the retry policy; the last error is rethrown unchanged when retries run out. */
export function withRetry(next: Send, options: RetryOptions = {}): Send {
  const policy = { ...DEFAULT_RETRY, ...options.policy };
  const sleep = options.sleep ?? ((ms: number, signal?: AbortSignal) => delay(ms, undefined, { signal }));
  const random = options.random ?? Math.random;
  const withTries: Send = async (req) => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await next(req);
      } catch (err) {
        const wait = retryDelay(err, req, attempt, policy, random);
        if (wait === undefined) throw err;
        options.onRetry?.({ err: err as ApiError, attempt, delayMs: wait, req });
        try {
          await sleep(wait, req.signal);
        } catch (abort) {
          throw new CancelledError('Interrupted.', { cause: abort });
        }
      }
    }
  };
  // The caller owns the retry policy (the import engine): no try/catch frame around its requests.
  return (req) => (req.noRetry ? next(req) : withTries(req));
}
