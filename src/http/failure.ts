// The one failure policy of cardboard: what a failed request tells us (was it sent? may it have been
// applied? will trying again help?) and how long to back off. Every retry policy (a command's, the
// import's writes) and the rate gate decide from these, so they cannot disagree.
import type { ApiError } from '../errors.js';
import { formatDuration } from '../units.js';

/** What a failed request means for repeating it. */
type FailureKind =
  /** Never reached the server (refused, DNS, connect timeout, TLS handshake): repeating cannot duplicate. */
  | 'not-sent'
  /** The server said it did nothing and to come back (429, 503): repeat after Retry-After. */
  | 'retryable'
  /** Sent, outcome unknown (500/502/504, reset or timeout after sending, a 2xx we could not read): a POST may have been applied. */
  | 'maybe-applied'
  /** Answered with a refusal (3xx, 4xx but 429, 501): repeating the same request cannot help. */
  | 'refused';

/** A classified failure; `heals` is false when trying again within seconds cannot help (DNS, TLS, oversize). */
type Failure =
  | { kind: Exclude<FailureKind, 'retryable'>; heals: boolean; retryAfterMs?: undefined }
  | {
      kind: 'retryable';
      heals: true;
      /** Milliseconds the server asked us to wait (its Retry-After), raised to RETRY_FLOOR_MS, when it said. */
      retryAfterMs?: number;
      /** The least wait before the request is sent again: RETRY_FLOOR_MS, or the longer wait the server asked for. */
      leastWaitMs: number;
    };

const TLS = ['CERT_HAS_EXPIRED', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'SELF_SIGNED_CERT_IN_CHAIN', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'ERR_TLS_CERT_ALTNAME_INVALID'];
/** Failures before the request left: the connection or its TLS handshake never completed. */
const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT', ...TLS]);
/** Failures that will not heal by trying again within seconds. */
const PERMANENT = new Set(['ENOTFOUND', 'UND_ERR_RES_EXCEEDED_MAX_SIZE', 'ERR_BUFFER_TOO_LARGE', 'EUNSUPPORTED_ENCODING', ...TLS]);

/**
 * The least wait before a request the server declined (429, 503) is sent again, whatever its Retry-After
 * says. `Retry-After: 0` and a date already past are legal and mean "now"; taken literally, a server that
 * keeps saying so gets the next request as fast as the network answers. Retry-After
 * counts whole seconds, so a second is the shortest wait a server can ask for other than none.
 */
export const RETRY_FLOOR_MS = 1000;

/** The most jitter added to a server's wait: processes told the same Retry-After come back spread over it. */
const JITTER_MS = 1000;

/** Classify an ApiError (status set: the server answered; unset: the network failed, `code` says how). */
export function classify(err: ApiError): Failure {
  const { status } = err;
  if (status === undefined) {
    const code = err.code ?? '';
    return { kind: NOT_SENT.has(code) ? 'not-sent' : 'maybe-applied', heals: !PERMANENT.has(code) };
  }
  if (status === 429 || status === 503) {
    // The retry floor, applied here and nowhere else: every wait (retryWaitMs), every pause of the rate gate
    // and every budget or give-up check reads it from the failure, so each counts what will really be waited.
    const asked = err.retryAfter;
    const leastWaitMs = Math.max(RETRY_FLOOR_MS, (asked ?? 0) * 1000);
    return asked === undefined ? { kind: 'retryable', heals: true, leastWaitMs } : { kind: 'retryable', heals: true, retryAfterMs: leastWaitMs, leastWaitMs };
  }
  if (status < 300 || (status >= 500 && status !== 501)) return { kind: 'maybe-applied', heals: true };
  return { kind: 'refused', heals: false };
}

/**
 * The hint of a 429 that a command stops waiting for. It names the service's limit (not in the spec,
 * section 8) and no --rate: that flag paces one process, and the limit is shared by
 * every process and person using the company's keys. The import adds --rate where it can help.
 */
export const RATE_LIMIT_FACT = 'The service allows about 120 requests a minute per API key, shared by all keys of a company.';
export const RATE_LIMIT_HINT = `${RATE_LIMIT_FACT} Other commands using them took the share: try again in a minute.`;

/** Exponential backoff bounds: the first wait's ceiling, and the largest ceiling. */
export interface Backoff {
  baseMs: number;
  maxMs: number;
}

/**
 * Milliseconds to wait before try `attempt + 1` (`attempt` counts tries made, 1 after the first):
 * exponential with full jitter, so many clients retrying at once spread over the whole window.
 */
export function backoffMs(attempt: number, bounds: Backoff, random: () => number): number {
  const ceiling = Math.min(bounds.maxMs, bounds.baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.floor(random() * ceiling);
}

/**
 * Milliseconds to wait before repeating a request after `failure`, given the caller's jittered `backoff`
 * for this attempt: the one place a failure becomes a wait (the retry policies, the rate gate). A
 * request the server declined (429, 503) waits at least its `leastWaitMs` (classify: the floor whatever
 * Retry-After said): with a Retry-After, that wait plus a jitter of up to spreadMs; without a usable one
 * (absent, negative, garbage), that wait plus the backoff. Other failures wait the backoff: their tries
 * are counted, so they cannot loop.
 */
export function retryWaitMs(failure: Failure, backoff: number, random: () => number): number {
  if (failure.kind !== 'retryable') return backoff;
  const least = failure.leastWaitMs;
  if (failure.retryAfterMs === undefined) return least + backoff;
  return least + Math.floor(random() * spreadMs(least));
}

/**
 * The most jitter added to a server's wait of `baseMs`: a quarter of it, at most a second. Enough to spread
 * processes told the same Retry-After (a quarter second for `Retry-After: 1`, five requests at 20/s); each
 * millisecond of it is one the client idles under the limit, so it is no wider than that.
 */
export function spreadMs(baseMs: number): number {
  return Math.min(baseMs / 4, JITTER_MS);
}

/**
 * Whether a request may be repeated after this failure: anything that never left or that the server
 * declined (429/503) may; an uncertain outcome only when repeating cannot duplicate (`idempotent`: a GET,
 * or a POST the caller marked safe); a refusal or a failure that cannot heal never.
 */
export function mayRepeat(f: Failure, idempotent: boolean): boolean {
  if (!f.heals || f.kind === 'refused') return false;
  return f.kind !== 'maybe-applied' || idempotent;
}

/** A server's wait for people: `11d 13h` from a day on (Retry-After: 999999), else `1h30m`, `45s`. */
export function waitText(ms: number): string {
  const s = Math.ceil(ms / 1000);
  if (s >= 86_400) return `${Math.floor(s / 86_400)}d ${Math.floor((s % 86_400) / 3600)}h`;
  return formatDuration(s * 1000);
}
