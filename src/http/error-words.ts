// What a failed request's error says beyond the one answer it got: the tries a timeout took (the
// retry loop knows them, not the core), and the size of a body a server refused (the API layer knows
// what the body was: a card, a comment).
import { ApiError } from '../errors.js';
import { formatBytes, formatDuration } from '../units.js';

/** The advice of every timeout's hint. */
export const TIMEOUT_ADVICE = 'Check the base URL, or allow longer with --timeout, e.g. --timeout 2m.';

/**
 * The error a request ends with after `made` tries, `timedOut` of them cut off by the timeout: a timeout
 * then names the tries and the wait of each (--timeout bounds one try, and the retry policy may make
 * several), so `--timeout 2s` that took 10 s says why. Any other error is returned as it is.
 */
export function afterTries(err: unknown, made: number, timedOut: number): unknown {
  if (!(err instanceof ApiError) || err.timeoutMs === undefined || made < 2 || timedOut < 1) return err;
  const { method, url, code, timeoutMs } = err;
  const each = formatDuration(timeoutMs);
  const tries = timedOut === made ? `${made} tries` : `${timedOut} of ${made} tries`;
  // A connect timeout may be shorter than --timeout (at most 10 s): its tries are counted, not timed.
  const what = code === 'UND_ERR_CONNECT_TIMEOUT' ? `no connection in ${tries}` : `no complete answer in ${tries} of ${each} each`;
  const hint = `Each try waited up to ${each}: --timeout bounds one try, not the whole command. ${TIMEOUT_ADVICE}`;
  return new ApiError(`${method} ${url} failed: ${what} (${code})`, { method, url, code, timeoutMs }, { hint, cause: err.cause });
}

/**
 * From this size on, a body answered 400 may have been refused for its size (the emulator's limit is
 * 1 MB; many servers and proxies have one near it). A 413 names the size whatever it is.
 */
export const LARGE_BODY_BYTES = 1024 ** 2;

/**
 * `the card sent was 5.2 MB`, when a 400 or 413 answer may have been about the size of the body sent
 * (`what`: the card, the comment); undefined otherwise. The server may refuse it for another reason: the
 * words say what was sent, not why it was refused.
 */
export function bodySizeNote(err: ApiError, what: string): string | undefined {
  const bytes = err.sentBytes;
  if (bytes === undefined || (err.status !== 413 && bytes < LARGE_BODY_BYTES)) return undefined;
  return `the ${what} sent was ${formatBytes(bytes)}`;
}

/**
 * A 400 or 413 answer to a large body (bodySizeNote) with the size in its message and a hint that says
 * the server may limit it; any other error as it is. The API layer calls it, which knows what it sent.
 */
export function namingBodySize(err: unknown, what: string): unknown {
  if (!(err instanceof ApiError)) return err;
  const note = bodySizeNote(err, what);
  if (note === undefined) return err;
  const { method, url, status, serverMessage, retryAfter, sentBytes } = err;
  const size = formatBytes(sentBytes!);
  const hint = `The server refused a ${size} ${what}${status === 413 ? ' as too large' : ''}; it may limit the size of a ${what}: try a smaller one.`;
  return new ApiError(`${err.message} (${note})`, { method, url, status, serverMessage, retryAfter, sentBytes }, { hint, cause: err.cause });
}
