// The retry policy of one row's POST (issue 4, section 5): retry what provably was not applied, repeat
// an `_id` post (an update cannot duplicate), re-check the board by key before repeating a create, and
// otherwise call the row uncertain rather than risk a duplicate.
import type { Api } from '../api/types.js';
import { ApiError } from '../errors.js';
import type { Card } from '../spec-types.js';
import { formatDuration } from '../units.js';
import { findByKey } from './match-index.js';
import type { Pacer } from './pacer.js';

/** How a POST ended, before the engine turns it into a row state. */
export type SendResult =
  | { kind: 'ok'; card: Card; recovered?: string }
  | { kind: 'found'; id: string; reason: string }
  | { kind: 'rejected'; message: string; fatal?: ApiError }
  | { kind: 'uncertain'; message: string }
  | { kind: 'stopped' };

/** What a send needs from the run. */
export interface SendContext {
  api: Api;
  pacer: Pacer;
  /** Aborted on Ctrl-C or a fatal answer: no new try starts (a try already sent is awaited). */
  stop: AbortSignal;
  /** Right before each try leaves: a promise to wait for (the journal writing finished rows), if any. */
  beforeSend(): Promise<void> | undefined;
  onRetry(reason: string, attempt: number): void;
  /** --match-on field, to re-check a create after an uncertain failure. */
  matchOn?: string;
  /** Tries for failures that may repeat safely (5xx with `_id`, refused connections). */
  maxTries: number;
  /** How long a row may meet nothing but 429s before the run stops: a CI job must end, not wait forever. */
  giveUpAfterMs: number;
}

/** Network failures where the request provably never reached the server. */
const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);

function describe(err: ApiError): string {
  if (err.status === undefined) return err.message;
  return `${err.status}${err.serverMessage ? ` ${err.serverMessage}` : ''}`;
}

/** The error that stops a run the service has kept answering 429: nothing of the row was applied. */
function stillThrottled(err: ApiError, ms: number): ApiError {
  return new ApiError(
    `The service answered nothing but 429 for ${formatDuration(ms)}; stopped (${err.status} from ${err.method} ${err.url}).`,
    { method: err.method, url: err.url, status: err.status, serverMessage: err.serverMessage, retryAfter: err.retryAfter },
    { hint: 'Finished rows are in the journal: run the same command later to resume, with a lower --rate, or another token.' },
  );
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Exponential backoff with jitter: 100-200 ms, then doubling up to 8 s. */
function backoff(attempt: number): Promise<unknown> {
  return sleep(Math.min(8000, 200 * 2 ** (attempt - 1)) * (0.5 + Math.random() / 2));
}

/** POST one row's body, applying the retry rules; `key` is the row's --match-on value, if any. */
export async function sendRow(sc: SendContext, body: Record<string, string>, key: string | undefined): Promise<SendResult> {
  const hasId = body._id !== undefined;
  let recovered: string | undefined;
  let throttledSince: number | undefined;
  for (let attempt = 1; ; attempt++) {
    if (sc.stop.aborted) return { kind: 'stopped' };
    // Unpaced (no limit learned yet, no pause): no await, the common case of a fast import.
    const sentAt = sc.pacer.tryAcquire() ?? (await sc.pacer.acquire(sc.stop));
    const written = sc.beforeSend();
    if (written) await written;
    if (sc.stop.aborted) return { kind: 'stopped' };
    try {
      // noRetry: this policy, not the client's, decides what may be sent again. No signal either:
      // a try that has left is awaited on Ctrl-C, or its outcome would be unknown.
      const card = await sc.api.putCard(body, { noRetry: true });
      sc.pacer.succeeded();
      return recovered === undefined ? { kind: 'ok', card } : { kind: 'ok', card, recovered };
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      const reason = describe(err);
      const status = err.status;
      if (status === 429) {
        throttledSince ??= Date.now();
        if (Date.now() - throttledSince >= sc.giveUpAfterMs) return { kind: 'rejected', message: `${reason} (not applied)`, fatal: stillThrottled(err, sc.giveUpAfterMs) };
        // Nothing was applied; every worker waits (issue 4, section 4).
        sc.pacer.throttled(sentAt, (err.retryAfter ?? 1) * 1000);
        sc.onRetry('429', attempt);
        attempt--; // a 429 is the pacing working, not a failing row
        continue;
      }
      if (status === 401 || status === 403 || status === 404) return { kind: 'rejected', message: reason, fatal: err };
      if (status !== undefined && status >= 400 && status < 500) return { kind: 'rejected', message: reason };
      const notApplied = status === 503 || (status === undefined && NOT_SENT.has(err.code ?? ''));
      if (attempt >= sc.maxTries) {
        const message = `gave up after ${attempt} tries: ${reason}`;
        return notApplied ? { kind: 'rejected', message: `${message} (not applied)` } : { kind: 'uncertain', message };
      }
      if (notApplied) {
        // A 503 holds only this row for its Retry-After: unlike a 429 it says nothing about our rate.
        if (status === 503 && err.retryAfter !== undefined) await sleep(Math.min(30_000, err.retryAfter * 1000));
        else await backoff(attempt);
        sc.onRetry(reason, attempt);
        continue;
      }
      // 500, 502, 504, a reset or a timeout after sending: the card may exist now.
      if (hasId) {
        recovered = reason;
        sc.onRetry(reason, attempt);
        await backoff(attempt);
        continue;
      }
      if (sc.matchOn !== undefined && key !== undefined) {
        sc.onRetry(`${reason}; re-reading the board for '${key}'`, attempt);
        let id: string | undefined;
        try {
          id = await findByKey(sc.api, sc.pacer, sc.matchOn, key, sc.stop);
        } catch (readErr) {
          if (sc.stop.aborted) return { kind: 'uncertain', message: `${reason}; interrupted while re-reading the board` };
          return { kind: 'uncertain', message: `${reason}; re-reading the board failed: ${(readErr as Error).message}` };
        }
        if (id !== undefined) return { kind: 'found', id, reason };
        recovered = reason;
        continue;
      }
      return { kind: 'uncertain', message: `${reason}: the card may or may not have been created; not re-sent` };
    }
  }
}
