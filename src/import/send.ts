// The retry policy of one row's POST: retry what provably was not applied, and settle what may have been
// applied by reading the board, never by sending again blindly: an `_id` is repeated only once its card is
// known to exist (spec 4.3 rule 4: otherwise the repeat creates another card), and a create is looked for
// on the board (by --match-on key, or by content) before it is sent again.
import type { Api } from '../api/types.js';
import type { Clock } from '../clock.js';
import { ApiError, CancelledError } from '../errors.js';
import { type Backoff, backoffMs, classify, RATE_LIMIT_FACT, retryWaitMs, waitText } from '../http/failure.js';
import type { Card } from '../spec-types.js';
import { formatDuration } from '../units.js';
import type { Probe } from './recheck.js';

/** How a POST ended, before the engine turns it into a row state. */
export type SendResult =
  | { kind: 'ok'; card: Card; recovered?: string }
  /** A read of the board found the card a try that may have been applied made. */
  | { kind: 'found'; id: string; reason: string; by: 'key' | 'content' }
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
  /** The run's "stop now" (the grace after Ctrl-C is over): a try in flight is cut off, and may have been applied. */
  now?: AbortSignal;
  /** Right before each try leaves: a promise to wait for (the journal writing finished rows), if any. */
  beforeSend(): Promise<void> | undefined;
  onRetry(reason: string, attempt: number): void;
  /** A read of the board settled whether a try was applied (counted in the summary). */
  onSettled(): void;
  /** The row's card on the board, by --match-on key or by content (batched, recheck.ts). */
  recheck(probe: Probe): Promise<string | undefined>;
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

/** Where a row that may have been applied stands, read from the board. */
type Settled = { kind: 'found'; id: string; by: 'key' | 'content' } | { kind: 'send' } | { kind: 'uncertain'; message: string };

/**
 * Settle a row whose earlier try may have been applied (`reason`). With an `_id`: a card that exists makes
 * the post repeatable (an update); one that does not may have been created under a new id by that try, so
 * it is looked for like a row without one. Then by the --match-on key, or by the content the row sends.
 */
async function settle(sc: SendContext, body: Record<string, unknown>, key: string | undefined, reason: string): Promise<Settled> {
  sc.onSettled();
  if (body._id !== undefined) {
    try {
      // As patient as a page of the board's read: a GET cannot duplicate anything.
      await sc.api.getCard(String(body._id), { signal: sc.stop, maxTries: 8 });
      return { kind: 'send' };
    } catch (err) {
      if (sc.stop.aborted) return { kind: 'uncertain', message: `${reason}; interrupted while reading card ${String(body._id)}` };
      if (!(err instanceof ApiError) || err.status !== 404) {
        return { kind: 'uncertain', message: `${reason}; reading card ${String(body._id)} failed: ${(err as Error).message}` };
      }
    }
  }
  const probe: Probe = key !== undefined ? { kind: 'key', key } : { kind: 'content', body };
  try {
    const id = await sc.recheck(probe);
    return id === undefined ? { kind: 'send' } : { kind: 'found', id, by: probe.kind };
  } catch (readErr) {
    if (sc.stop.aborted) return { kind: 'uncertain', message: `${reason}; interrupted while reading the board` };
    return { kind: 'uncertain', message: `${reason}; reading the board failed: ${(readErr as Error).message}` };
  }
}

/**
 * POST one row's body, applying the retry rules; `key` is the row's --match-on value, if any.
 * `maybeApplied`: an earlier run's try may have been applied (why): the board is read before any send.
 */
export async function sendRow(sc: SendContext, body: Record<string, unknown>, key: string | undefined, maybeApplied?: string): Promise<SendResult> {
  let recovered: string | undefined;
  let throttledSince: number | undefined;
  let unreachableSince: number | undefined;
  const wait = (ms: number) => sc.clock.sleep(ms, sc.stop);
  if (maybeApplied !== undefined) {
    const s = await settle(sc, body, key, maybeApplied);
    if (s.kind === 'found') return { kind: 'found', id: s.id, reason: maybeApplied, by: s.by };
    if (s.kind === 'uncertain') return s;
    recovered = maybeApplied;
  }
  for (let attempt = 1; ; attempt++) {
    if (sc.stop.aborted) return { kind: 'stopped' };
    const written = sc.beforeSend();
    if (written) await written;
    if (sc.stop.aborted) return { kind: 'stopped' };
    try {
      // noRetry: this policy, not the client's, decides what may be sent again.
      // waitSignal: a try still waiting for the rate gate (a long 429 pause) is dropped when the run stops;
      // a try that has left is awaited on the first Ctrl-C, and cut off only when the run must stop now.
      const card = await sc.api.putCard(body, { noRetry: true, waitSignal: sc.stop, signal: sc.now });
      return recovered === undefined ? { kind: 'ok', card } : { kind: 'ok', card, recovered };
    } catch (err) {
      if (err instanceof CancelledError) {
        // Cut off in flight: the server may have stored it; the next run reads the board for it (resume.ts).
        if (err.inFlight) return { kind: 'uncertain', message: 'interrupted in flight: the card may have been stored' };
        return { kind: 'stopped' }; // never sent
      }
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
      if (notApplied) {
        // A 503 holds only this row for its Retry-After (at least the floor): unlike a 429 it says nothing about our rate.
        sc.onRetry(reason, attempt);
        await wait(retryWaitMs(failure, backoffMs(attempt, ROW_BACKOFF, sc.clock.random), sc.clock.random));
        continue;
      }
      // Maybe applied (500, 502, 504, a 2xx without `_id`, a reset or a timeout after sending): the card
      // may exist now. The board is read before anything else is sent for this row.
      const settled = await settle(sc, body, key, reason);
      if (settled.kind === 'found') return { kind: 'found', id: settled.id, reason, by: settled.by };
      if (settled.kind === 'uncertain') return settled;
      // A success without an `_id` says the server took the row: not finding it is no proof it was not stored.
      if (err.code === 'ENOCARDID') {
        return { kind: 'uncertain', message: `${reason}: the server answered success without a card _id, and no card with these values is on the board; not re-sent` };
      }
      if (attempt >= sc.maxTries || !failure.heals) {
        return { kind: 'uncertain', message: `gave up after ${attempt} tries: ${reason}` };
      }
      recovered = reason;
      sc.onRetry(reason, attempt);
      await wait(backoffMs(attempt, ROW_BACKOFF, sc.clock.random));
    }
  }
}
