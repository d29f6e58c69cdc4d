// One row's POST: sent through the client's one retry loop under the write policy (http/write-policy.ts:
// give-up-after, the unreachable grace, tries), with what is the row's own here: settling a try that may
// have been applied by reading the board, never by sending again blindly (an `_id` is repeated only once
// its card is known to exist, spec 4.3 rule 4; a create is looked for by --match-on key or by content),
// what an ending means for the row, and the texts that stop the run.
import type { Api } from '../api/types.js';
import type { Clock } from '../clock.js';
import { ApiError, CancelledError } from '../errors.js';
import { bodySizeNote } from '../http/error-words.js';
import { RATE_LIMIT_FACT, waitText } from '../http/failure.js';
import type { HttpRequest } from '../http/core.js';
import type { RetryDecision, RetryInfo, RetryPolicy, Tries } from '../http/retry.js';
import { type WriteStop, WriteStopped, writePolicy } from '../http/write-policy.js';
import type { Card } from '../spec-types.js';
import { formatDuration } from '../units.js';
import { digestOf } from './match-index.js';
import type { Probe } from './recheck.js';
import { plural } from '../io/text.js';

/** How a POST ended, before the engine turns it into a row state. */
export type SendResult =
  | { kind: 'ok'; card: Card; recovered?: string }
  /**
   * A read of the board found the card a try that may have been applied made: a try of this run, or of an
   * earlier one (`earlier`). `idExists`: the row posted an `_id` that names a card on the board.
   */
  | { kind: 'found'; id: string; reason: string; by: 'key' | 'content'; earlier?: boolean; idExists?: boolean; card: Card }
  | { kind: 'rejected'; message: string; fatal?: ApiError }
  | { kind: 'uncertain'; message: string }
  /** The service could not be reached (or answered only 503) for the whole grace: nothing of the row was applied. */
  | { kind: 'unreachable'; fatal: ApiError }
  | { kind: 'stopped' };

/** The row a send is for, as the run's hooks know it: its line, and whether a read of the board decided it. */
interface RowRef {
  readonly line: number;
  /** Where it is journalled, and what it sends: a retry is journalled as `sending` again before it leaves. */
  readonly journalLine: number;
  readonly digest?: string;
  settled?: boolean;
}

/** What a send needs from the run: one value shared by every row (the row's own part is a RowRef). */
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
  onRetry(row: RowRef, reason: string, attempt: number): void;
  /** A read of the board settled whether the row's try was applied (counted in the summary). */
  onSettled(row: RowRef): void;
  /** The row's card on the board, by --match-on key or by content (batched, recheck.ts). */
  recheck(probe: Probe): Promise<Card | undefined>;
  /**
   * Whether the board is known to update a card posted with its `_id` (Update if exists, spec 4.3 rule 4):
   * only then may a post with an `_id` whose card exists be repeated. Else (Always Create New, or not known
   * yet) a repeat may make a second card (rule 3), so such a try is settled by content.
   */
  updatesById(): boolean;
  /** Tries of the row, 429s not counted, past which a try that may have been applied is not sent again (write-policy.ts). */
  maxTries: number;
  /** How long a row may meet nothing but 429s before the run stops: a CI job must end, not wait forever. */
  giveUpAfterMs: number;
  /** How long a row may fail to reach the service (refused, DNS, reset before sending, 503) before the run stops. */
  unreachableAfterMs: number;
}

function describe(err: ApiError): string {
  if (err.status === undefined) return err.message;
  const size = bodySizeNote(err, 'card');
  return `${err.status}${err.serverMessage ? ` ${err.serverMessage}` : ''}${size === undefined ? '' : ` (${size}; the server may limit the size of a card)`}`;
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
type Settled = { kind: 'found'; id: string; by: 'key' | 'content'; idExists?: boolean; card: Card } | { kind: 'send' } | { kind: 'uncertain'; message: string };

/** Whether `card` holds every value `body` sends (its `_id` aside), compared as canonical JSON. */
function holds(card: Card, body: Record<string, unknown>): boolean {
  const fields = Object.keys(body).filter((f) => f !== '_id');
  return digestOf(card, fields) === digestOf(body, fields);
}

/**
 * Settle a row whose earlier try may have been applied (`reason`). With an `_id` whose card exists: on a
 * board known to update by `_id`, the post is an update and may be repeated; otherwise the try may have
 * made a new card (Always Create New, spec 4.3 rule 3), so the card itself is checked for the row's values
 * (the try updated it) and then the board is looked for a card holding them (the try created one). An `_id`
 * that names no card may have made a new card too (rule 4). Then by the --match-on key, or by content.
 */
async function settle(sc: SendContext, row: RowRef, body: Record<string, unknown>, key: string | undefined, reason: string): Promise<Settled> {
  sc.onSettled(row);
  let idExists: boolean | undefined;
  if (body._id !== undefined) {
    const id = String(body._id);
    try {
      // As patient as a page of the board's read: a GET cannot duplicate anything.
      const card = await sc.api.getCard(id, { signal: sc.stop, maxTries: 8 });
      if (sc.updatesById()) return { kind: 'send' };
      idExists = true;
      if (holds(card, body)) return { kind: 'found', id, by: 'content', idExists, card };
    } catch (err) {
      if (sc.stop.aborted) return { kind: 'uncertain', message: `${reason}; interrupted while reading card ${id}` };
      if (!(err instanceof ApiError) || err.status !== 404) {
        return { kind: 'uncertain', message: `${reason}; reading card ${id} failed: ${(err as Error).message}` };
      }
      idExists = false;
    }
  }
  const probe: Probe = key !== undefined ? { kind: 'key', key } : { kind: 'content', body };
  try {
    const card = await sc.recheck(probe);
    if (card === undefined) return { kind: 'send' };
    const found: Settled = { kind: 'found', id: card._id, by: probe.kind, card };
    if (idExists !== undefined) found.idExists = idExists;
    return found;
  } catch (readErr) {
    if (sc.stop.aborted) return { kind: 'uncertain', message: `${reason}; interrupted while reading the board` };
    return { kind: 'uncertain', message: `${reason}; reading the board failed: ${(readErr as Error).message}` };
  }
}

/** A row's ending found on the board by `settled`. */
function foundResult(settled: Extract<Settled, { kind: 'found' }>, reason: string, earlier: boolean): SendResult {
  const result: SendResult = { kind: 'found', id: settled.id, reason, by: settled.by, card: settled.card };
  if (earlier) result.earlier = true;
  if (settled.idExists !== undefined) result.idExists = settled.idExists;
  return result;
}

/** Settle a try that may have been applied (`err`): the row's ending, or undefined when it was not applied. */
async function settleTry(sc: SendContext, row: RowRef, body: Record<string, unknown>, key: string | undefined, err: ApiError): Promise<SendResult | undefined> {
  const reason = describe(err);
  const s = await settle(sc, row, body, key, reason);
  if (s.kind === 'found') return foundResult(s, reason, false);
  return s.kind === 'uncertain' ? s : undefined;
}

/** A row's ending reached while settling (found on the board, or uncertain): it ends the request as it is. */
class RowSettled extends Error {
  constructor(readonly result: SendResult) {
    super(result.kind);
  }
}

/** What the write policy's stop means for the row, in the row's texts. */
function stopResult(sc: SendContext, why: WriteStop): SendResult {
  const notApplied = `${describe(why.err)} (not applied)`;
  switch (why.kind) {
    case 'throttled':
      return { kind: 'rejected', message: notApplied, fatal: stillThrottled(why.err, sc.giveUpAfterMs) };
    case 'throttled-wait':
      return { kind: 'rejected', message: notApplied, fatal: waitBeyondGiveUp(why.err, why.askedMs, why.forMs, sc.giveUpAfterMs) };
    case 'unreachable': {
      const asked = why.askedMs === undefined ? undefined : { ms: why.askedMs, graceMs: sc.unreachableAfterMs };
      return { kind: 'unreachable', fatal: unreachable(why.err, why.forMs, asked) };
    }
    case 'gave-up':
      return { kind: 'uncertain', message: `gave up after ${plural(why.tries, 'try', 'tries')}: ${describe(why.err)}` };
  }
}

/**
 * A row's retry policy: the write policy (write-policy.ts) with the row's settling, made at its first
 * failed try. Most rows succeed at once, and then cost this one object, not the policy's closures.
 */
class RowPolicy implements RetryPolicy {
  private write: RetryPolicy | undefined;

  constructor(
    private readonly sc: SendContext,
    private readonly row: RowRef,
    private readonly body: Record<string, unknown>,
    private readonly key: string | undefined,
    /** Why an earlier try may have been applied, once a read of the board found it was not. */
    public recovered: string | undefined,
  ) {}

  beforeTry(): Promise<void> | undefined {
    return this.sc.beforeSend();
  }

  decide(err: unknown, tries: Tries, req: HttpRequest): RetryDecision | Promise<RetryDecision> {
    this.write ??= this.policy();
    return this.write.decide(err, tries, req);
  }

  onRetry(info: RetryInfo): void {
    this.write?.onRetry?.(info);
  }

  private policy(): RetryPolicy {
    const { sc, row, body, key } = this;
    return writePolicy({
      clock: sc.clock,
      maxTries: sc.maxTries,
      giveUpAfterMs: sc.giveUpAfterMs,
      unreachableAfterMs: sc.unreachableAfterMs,
      onRetry: ({ err, counted }) => sc.onRetry(row, err.status === 429 ? '429' : describe(err), counted),
      settle: async (err) => {
        const end = await settleTry(sc, row, body, key, err);
        if (end) return { stop: new RowSettled(end) };
        this.recovered = describe(err);
        return 'repeat';
      },
    });
  }
}

/**
 * POST one row's body under the write policy; `key` is the row's --match-on value, if any.
 * `maybeApplied`: an earlier run's try may have been applied (why): the board is read before any send.
 */
export async function sendRow(sc: SendContext, row: RowRef, body: Record<string, unknown>, key: string | undefined, maybeApplied?: string): Promise<SendResult> {
  let recovered: string | undefined;
  if (maybeApplied !== undefined) {
    const settled = await settle(sc, row, body, key, maybeApplied);
    // The try that may have stored it was an earlier run's: what is found, this run did not add.
    if (settled.kind === 'found') return foundResult(settled, maybeApplied, true);
    if (settled.kind === 'uncertain') return settled;
    recovered = maybeApplied;
  }
  const retry = new RowPolicy(sc, row, body, key, recovered);
  try {
    // waitSignal: a try still waiting (for the rate gate's pause, a backoff, the journal) is dropped when the
    // run stops taking work; a try that has left is awaited then, and cut off only when the run must stop now.
    const card = await sc.api.putCard(body, { retry, waitSignal: sc.stop, signal: sc.now });
    return retry.recovered === undefined ? { kind: 'ok', card } : { kind: 'ok', card, recovered: retry.recovered };
  } catch (err) {
    if (err instanceof RowSettled) return err.result;
    if (err instanceof WriteStopped) return stopResult(sc, err.why);
    if (err instanceof CancelledError) {
      // Cut off in flight: the server may have stored it; the next run reads the board for it (resume.ts).
      if (err.inFlight) return { kind: 'uncertain', message: 'interrupted in flight: the card may have been stored' };
      return { kind: 'stopped' }; // never sent
    }
    if (!(err instanceof ApiError)) throw err;
    // A success without an `_id` (putCard's check, after the answer) says the server took the row: not
    // finding it on the board is no proof it was not stored, so it is never sent again.
    if (err.code === 'ENOCARDID') {
      const message = `${describe(err)}: the server answered success without a card _id, and no card with these values is on the board; not re-sent`;
      return (await settleTry(sc, row, body, key, err)) ?? { kind: 'uncertain', message };
    }
    // Refused (4xx but 429, 3xx, 501): the row is wrong, or the token or board is (then the run stops).
    const reason = describe(err);
    const fatal = err.status === 401 || err.status === 403 || err.status === 404;
    return fatal ? { kind: 'rejected', message: reason, fatal: err } : { kind: 'rejected', message: reason };
  }
}
