// The retry policy of one row's POST (issue 4, section 5): retry what provably was not applied, repeat
// an `_id` post (an update cannot duplicate), re-check the board by key before repeating a create, and
// otherwise call the row uncertain rather than risk a duplicate.
import type { Api } from '../api/types.js';
import type { Clock } from '../clock.js';
import { ApiError, CancelledError } from '../errors.js';
import { type Backoff, backoffMs, classify, RATE_LIMIT_FACT, retryWaitMs, waitText } from '../http/failure.js';
import type { Card } from '../spec-types.js';
import { formatDuration } from '../units.js';

/** How a POST ended, before the engine turns it into a row state. */
export type SendResult =
  | { kind: 'ok'; card: Card; recovered?: string }
  | { kind: 'found'; id: string; reason: string }
  | { kind: 'rejected'; message: string; fatal?: ApiError }
  | { kind: 'uncertain'; message: string }
  /** The service could not be reached (or answered only 503) for the whole grace: nothing of the row was applied. */
  | { kind: 'unreachable'; fatal: ApiError }
  | { kind: 'stopped' };

/** What a send needs from the run. */
export interface SendContext {
  /** The client; its rate gate (the pacer) paces every try and learns from its 429s. */
  api: Api;
  clock: Clock;
  /** Aborted on Ctrl-C or a fatal answer: no new try starts and backoffs end (a try already sent is awaited). */
  stop: AbortSignal;
  /** Right before each try leaves: a promise to wait for (the journal writing finished rows), if any. */
  beforeSend(): Promise<void> | undefined;
  onRetry(reason: string, attempt: number): void;
  /** --match-on: after an uncertain create, the card holding `key` on the board (batched, recheck.ts). */
  recheck?: (key: string) => Promise<string | undefined>;
  /** Tries for failures that may repeat safely (503 or refused connections; 5xx with `_id`). */
  maxTries: number;
  /** How long a row may meet nothing but 429s before the run stops: a CI job must end, not wait forever. */
  giveUpAfterMs: number;
  /** How long a row may fail to reach the service (refused, DNS, reset before sending, 503) before the run stops. */
  unreachableAfterMs: number;
}

/** Backoff between tries of one row: 200 ms, doubling, at most 8 s (full jitter, failure.ts). */
export const ROW_BACKOFF: Backoff = { baseMs: 200, maxMs: 8000 };

function describe(err: ApiError): string {
  if (err.status === undefined) return err.message;
  return `${err.status}${err.serverMessage ? ` ${err.serverMessage}` : ''}`;
}

/** The error that stops a run the service has kept answering 429: nothing of the row was applied. */
function stillThrottled(err: ApiError, ms: number): ApiError {
  return new ApiError(
    `The service answered nothing but 429 for ${formatDuration(ms)}; stopped (${err.status} from ${err.method} ${err.url}).`,
    { method: err.method, url: err.url, status: err.status, serverMessage: err.serverMessage, retryAfter: err.retryAfter },
    {
      // Another token of the same company shares the limit: only pacing this import (--rate) helps.
      hint: `${RATE_LIMIT_FACT} Finished rows are in the journal: run the same command later to resume, with a lower --rate (e.g. --rate 1/s) if other commands use the same keys.`,
    },
  );
}

/** The error that stops a run at once when the server's Retry-After outlasts what --give-up-after leaves. */
function waitBeyondGiveUp(err: ApiError, askedMs: number, throttledFor: number, giveUpAfterMs: number): ApiError {
  const since = throttledFor >= 1000 ? `answered nothing but 429 for ${formatDuration(Math.round(throttledFor / 1000) * 1000)} and ` : '';
  const leftMs = giveUpAfterMs - throttledFor;
  const left = formatDuration(leftMs >= 1000 ? Math.floor(leftMs / 1000) * 1000 : leftMs);
  return new ApiError(
    `The service ${since}asks to wait ${waitText(askedMs)} (Retry-After); --give-up-after ${formatDuration(giveUpAfterMs)} leaves ${left}: stopped (${err.status} from ${err.method} ${err.url}).`,
    { method: err.method, url: err.url, status: err.status, serverMessage: err.serverMessage, retryAfter: err.retryAfter },
    { hint: `${RATE_LIMIT_FACT} Finished rows are in the journal: run the same command later to resume (once that wait is over), with a lower --rate (e.g. --rate 1/s) or a longer --give-up-after.` },
  );
}

/** The error that stops a run whose service cannot be reached: rows not sent keep no state. */
function unreachable(err: ApiError, ms: number, asked?: { ms: number; graceMs: number }): ApiError {
  const base = err.url.replace(/^(\w+:\/\/[^/]+).*$/, '$1');
  const since = ms >= 1000 ? ` for ${formatDuration(Math.round(ms / 1000) * 1000)}` : '';
  const asks = asked === undefined ? '' : ` and asks to wait ${waitText(asked.ms)} (Retry-After), past the ${formatDuration(asked.graceMs)} an import waits for it`;
  return new ApiError(
    `The service at ${base} could not be reached${since} (${describe(err)})${asks}; stopped. Rows not sent keep no state.`,
    { method: err.method, url: err.url, status: err.status, serverMessage: err.serverMessage, code: err.code },
  );
}

/** POST one row's body, applying the retry rules; `key` is the row's --match-on value, if any. */
export async function sendRow(sc: SendContext, body: Record<string, unknown>, key: string | undefined): Promise<SendResult> {
  const hasId = body._id !== undefined;
  let recovered: string | undefined;
  let throttledSince: number | undefined;
  let unreachableSince: number | undefined;
  const wait = (ms: number) => sc.clock.sleep(ms, sc.stop);
  for (let attempt = 1; ; attempt++) {
    if (sc.stop.aborted) return { kind: 'stopped' };
    const written = sc.beforeSend();
    if (written) await written;
    if (sc.stop.aborted) return { kind: 'stopped' };
    try {
      // noRetry: this policy, not the client's, decides what may be sent again. No signal either:
      // a try that has left is awaited on Ctrl-C, or its outcome would be unknown.
      // waitSignal: a try still waiting for the rate gate (a long 429 pause) is dropped when the run stops.
      const card = await sc.api.putCard(body, { noRetry: true, waitSignal: sc.stop });
      return recovered === undefined ? { kind: 'ok', card } : { kind: 'ok', card, recovered };
    } catch (err) {
      if (err instanceof CancelledError && sc.stop.aborted) return { kind: 'stopped' }; // never sent
      if (!(err instanceof ApiError)) throw err;
      const reason = describe(err);
      const failure = classify(err);
      if (err.status === 429) {
        // Nothing was applied; the pacer has paused every worker for the Retry-After (issue 4, section 4).
        throttledSince ??= sc.clock.now();
        const throttledFor = sc.clock.now() - throttledSince;
        if (throttledFor >= sc.giveUpAfterMs) return { kind: 'rejected', message: `${reason} (not applied)`, fatal: stillThrottled(err, sc.giveUpAfterMs) };
        // A wait longer than what --give-up-after leaves cannot end in time: stop now, not days later.
        const left = sc.giveUpAfterMs - throttledFor;
        if (failure.retryAfterMs !== undefined && failure.retryAfterMs > left) {
          return { kind: 'rejected', message: `${reason} (not applied)`, fatal: waitBeyondGiveUp(err, failure.retryAfterMs, throttledFor, sc.giveUpAfterMs) };
        }
        sc.onRetry('429', attempt);
        attempt--; // a 429 is the pacing working, not a failing row
        continue;
      }
      if (failure.kind === 'refused') {
        const fatal = err.status === 401 || err.status === 403 || err.status === 404;
        return fatal ? { kind: 'rejected', message: reason, fatal: err } : { kind: 'rejected', message: reason };
      }
      const notApplied = failure.kind === 'not-sent' || failure.kind === 'retryable';
      if (notApplied) {
        // Nothing was applied, and the server did not refuse the row: the service is away, not the row
        // wrong. Past the grace the run stops and the row keeps no state: the next run sends it.
        unreachableSince ??= sc.clock.now();
        const away = sc.clock.now() - unreachableSince;
        if (!failure.heals || away >= sc.unreachableAfterMs) return { kind: 'unreachable', fatal: unreachable(err, away) };
        // A 503 whose Retry-After outlasts the grace cannot end in time either: stop now with its wait.
        if (failure.retryAfterMs !== undefined && failure.retryAfterMs > sc.unreachableAfterMs - away) {
          return { kind: 'unreachable', fatal: unreachable(err, away, { ms: failure.retryAfterMs, graceMs: sc.unreachableAfterMs }) };
        }
      } else unreachableSince = undefined;
      if (!notApplied && (attempt >= sc.maxTries || !failure.heals)) {
        return { kind: 'uncertain', message: `gave up after ${attempt} tries: ${reason}` };
      }
      if (notApplied) {
        // A 503 holds only this row for its Retry-After (at least the floor): unlike a 429 it says nothing about our rate.
        sc.onRetry(reason, attempt);
        await wait(retryWaitMs(failure, backoffMs(attempt, ROW_BACKOFF, sc.clock.random), sc.clock.random));
        continue;
      }
      // Maybe applied (500, 502, 504, a reset or a timeout after sending): the card may exist now.
      if (hasId) {
        // Repeating an `_id` post updates the same card: it cannot duplicate.
        recovered = reason;
        sc.onRetry(reason, attempt);
        await wait(backoffMs(attempt, ROW_BACKOFF, sc.clock.random));
        continue;
      }
      if (sc.recheck !== undefined && key !== undefined) {
        sc.onRetry(`${reason}; re-reading the board for '${key}'`, attempt);
        let id: string | undefined;
        try {
          id = await sc.recheck(key);
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
