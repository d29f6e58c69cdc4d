// The one rate gate of a client: every request of every command waits its turn here (the rate-limit
// wrapper at the end of this file puts it in front of the core). The service's rate limit is not documented
// (spec 8: "Rate limits: not shown"), so without --rate the pacer learns it: unlimited until the first 429,
// then additive-increase / multiplicative-decrease. A 429, or a 503 with Retry-After, pauses every request
// of the client, not just the one it answered; only a 429 lowers the rate.
import { type Clock, realClock } from '../clock.js';
import { ApiError, CancelledError } from '../errors.js';
import type { Send } from './types.js';
import { classify, retryWaitMs, spreadMs } from './failure.js';

/** The part of the clock the pacer uses (random: the jitter of a 429's pause, Math.random without it); tests pass a discrete-event clock. */
export type PacerClock = Pick<Clock, 'now' | 'sleep'> & Partial<Pick<Clock, 'random'>>;

interface PacerOptions {
  /** Requests per second from --rate: fixed, never adapted. */
  fixedRate?: number;
  /** Floor of the adaptive rate, requests per second (default 0.2). */
  minRate?: number;
  clock?: PacerClock;
}

const DECREASE = 0.85;
/** Successes needed in the window before a 429 may lower the rate. */
const MIN_SAMPLES = 2;
/** Once two congestion events agree on the limit, hold at it this long before probing past it. */
const HOLD_MS = 30_000;
const WINDOW_MS = 10_000;
const SLOT_MS = 100;
const SLOTS = WINDOW_MS / SLOT_MS;

/** The shared gate: acquire() before every request; report 429s and successes so it can adapt. */
export class Pacer {
  private rateValue: number;
  private next = 0;
  private pausedUntil = 0;
  private ceiling = Number.POSITIVE_INFINITY;
  private stable = false;
  private reachedCeiling = Number.POSITIVE_INFINITY;
  private probeStep = 0.01;
  private readonly started: number;
  private pauseEnd = Number.NEGATIVE_INFINITY;
  private lastDecrease = Number.NEGATIVE_INFINITY;
  private lastChange = 0;
  /** Successes per 100 ms slot over the last WINDOW_MS: constant memory at any rate. */
  private readonly slots = new Array<number>(SLOTS).fill(0);
  private readonly slotStamp = new Array<number>(SLOTS).fill(-1);
  private readonly clock: PacerClock;

  constructor(private readonly opts: PacerOptions = {}) {
    this.rateValue = opts.fixedRate ?? Number.POSITIVE_INFINITY;
    this.clock = opts.clock ?? realClock;
    this.started = this.clock.now();
  }

  /** A number in [0, 1) for the jitter of a 429's pause: the clock's, else Math.random. */
  readonly random = (): number => (this.clock.random ?? Math.random)();

  /** Requests per second now (Infinity: not yet limited). */
  get rate(): number {
    return this.rateValue;
  }

  /** The send time when a request may go at once (no rate set, no pause), without awaiting; else undefined. */
  tryAcquire(): number | undefined {
    if (Number.isFinite(this.rateValue)) return undefined;
    const now = this.clock.now();
    return now < this.pausedUntil ? undefined : now;
  }

  /** Wait for this request's turn; returns the send time, to pass back to throttled(). */
  async acquire(signal?: AbortSignal): Promise<number> {
    for (;;) {
      if (signal?.aborted) return this.clock.now();
      let now = this.clock.now();
      if (now < this.pausedUntil) {
        await this.clock.sleep(this.pausedUntil - now, signal);
        continue;
      }
      if (Number.isFinite(this.rateValue)) {
        // Smooth spacing, no saved-up burst: a burst is what drains the server's bucket into 429s.
        const slot = Math.max(now, this.next);
        this.next = slot + 1000 / this.rateValue;
        if (slot > now) await this.clock.sleep(slot - now, signal);
        now = this.clock.now();
        if (now < this.pausedUntil) continue; // a 429 paused everyone meanwhile: take a slot after it
      }
      return now;
    }
  }

  /**
   * Pause every worker (not only the caller) for the server's wait `ms` plus a jitter of up to `spreadMs`:
   * a 429 (through throttled()), or a 503 with Retry-After. The jitter spreads processes told the same
   * Retry-After, so it is drawn once per pause: the other requests in flight when it began answer 429 too,
   * and a fresh draw for each made the pause the largest of several, idling the client for longer than
   * any process needed. They still extend the pause to their own wait.
   */
  pause(ms: number, spreadMs = 0): void {
    const now = this.clock.now();
    const until = now + ms + (now < this.pausedUntil ? 0 : Math.floor(this.random() * spreadMs));
    if (until > this.pausedUntil) {
      this.pausedUntil = until;
      this.next = Math.max(this.next, until);
    }
  }

  /**
   * A 429 to a request sent at `sentAt`: pause all for Retry-After and, once per congestion event, slow
   * to 85 % of what the server actually accepted lately (requests in flight when we slowed down answer
   * 429 too; they say nothing new).
   */
  throttled(sentAt: number, retryAfterMs: number, spreadMs = 0): void {
    const now = this.clock.now();
    this.pause(retryAfterMs, spreadMs);
    if (this.opts.fixedRate !== undefined || sentAt <= this.lastDecrease) return;
    // What the server accepted over the last 2 s since the previous pause (a pause refills its bucket,
    // so counting across one would overstate the limit); before the first 429 that includes the burst.
    const from = Math.max(now - 2000, this.pauseEnd, this.started);
    const count = this.countSince(from);
    // Too few answers to estimate a rate from (a single `card put`, the first page of a listing): the
    // pause alone follows Retry-After; slowing to the floor on no evidence would crawl for minutes.
    if (count < MIN_SAMPLES) return;
    const accepted = count / Math.max(1, (now - from) / 1000);
    const floor = this.opts.minRate ?? 0.2;
    const base = Math.max(floor, Math.min(this.rateValue, accepted));
    // Stable: not clearly above the last ceiling, so the limit has not risen; hold near it, probe gently.
    this.stable = Number.isFinite(this.ceiling) && base <= this.ceiling * 1.15;
    this.ceiling = base;
    this.probeStep = 0.01;
    this.reachedCeiling = Number.POSITIVE_INFINITY;
    this.lastDecrease = now;
    this.pauseEnd = this.pausedUntil;
    this.lastChange = this.pausedUntil;
    this.setRate(base * DECREASE);
  }

  /**
   * A request answered without a 429. Once a second, while the rate is what limits us: back fast to
   * 90 % of the last ceiling; then slowly up to it (very slowly when two ceilings agree: the limit is
   * known, and each probe past it costs a 429); past it, probe with a step that doubles each second.
   */
  succeeded(): void {
    const now = this.clock.now();
    const slot = Math.floor(now / SLOT_MS);
    const at = slot % SLOTS;
    if (this.slotStamp[at] !== slot) {
      this.slotStamp[at] = slot;
      this.slots[at] = 0;
    }
    this.slots[at]!++;
    if (this.opts.fixedRate !== undefined || !Number.isFinite(this.rateValue)) return;
    if (now - this.lastChange < 1000 || now < this.pausedUntil) return;
    if (this.countSince(now - 1000) < this.rateValue * 0.7) return;
    this.lastChange = now;
    const ceiling = this.ceiling;
    if (this.rateValue < ceiling * 0.9) {
      this.setRate(Math.max(this.rateValue * 1.01, this.rateValue + (ceiling * 0.9 - this.rateValue) * 0.3));
    } else if (this.rateValue < ceiling) {
      this.setRate(Math.min(ceiling, this.rateValue * (this.stable ? 1.005 : 1.03)));
      if (this.rateValue >= ceiling) this.reachedCeiling = now;
    } else if (!this.stable || now - this.reachedCeiling >= HOLD_MS) {
      this.setRate(this.rateValue * (1 + this.probeStep));
      if (!this.stable) this.probeStep = Math.min(0.1, this.probeStep * 2);
    }
  }

  private setRate(perSecond: number): void {
    this.rateValue = Math.max(this.opts.minRate ?? 0.2, perSecond);
  }

  /** Successes since time t (at most WINDOW_MS ago), to the 100 ms slot. */
  private countSince(since: number): number {
    const from = Math.floor(since / SLOT_MS);
    let n = 0;
    for (let i = 0; i < SLOTS; i++) if (this.slotStamp[i]! >= from) n += this.slots[i]!;
    return n;
  }
}

/**
 * The pause a declined request asks of every worker: the wait retryWaitMs gives it before jitter (the server's
 * Retry-After raised to the floor, or the floor when it named none) and the jitter the pause may draw (only for
 * a wait the server named: without one there is nothing processes were told in common).
 */
function pauseOf(err: ApiError): [ms: number, spread: number] {
  const failure = classify(err);
  const ms = retryWaitMs(failure, 0, () => 0);
  return [ms, failure.kind === 'retryable' && failure.retryAfterMs !== undefined ? spreadMs(ms) : 0];
}

/**
 * Put the pacer in front of `next`: each try waits its turn, and its outcome teaches the pacer (a 429
 * pauses every request for its Retry-After and slows the rate; a 503 with Retry-After only pauses; a
 * success lets the rate recover).
 */
export function withPacer(next: Send, pacer: Pacer): Send {
  const settle = async (req: Parameters<Send>[0], sentAt: number) => {
    const gate = req.waitSignal ?? req.signal;
    if (gate?.aborted) throw new CancelledError('Interrupted.', { cause: gate.reason });
    try {
      const res = await next(req);
      pacer.succeeded();
      return res;
    } catch (err) {
      // The pause is the wait of every worker's next try: at least the retry floor whatever Retry-After said
      // (0, a date past, garbage), so a server answering "now" cannot draw a storm of requests.
      if (err instanceof ApiError && err.status === 429) pacer.throttled(sentAt, ...pauseOf(err));
      // A 503 naming a Retry-After is the service asking every client to hold off that long, so every
      // request of this one holds off, not only the one answered. It does not lower the rate: a 503 says
      // the service is unwell, not that our rate passed the key's limit, and a rate lowered for it would
      // take minutes of slow recovery after the service is back. A 503 without Retry-After says no time:
      // the request waits its own backoff, and its tries are counted.
      else if (err instanceof ApiError && err.status === 503 && err.retryAfter !== undefined) pacer.pause(...pauseOf(err));
      throw err;
    }
  };
  // Unlimited and not paused (an import against an unthrottled service): no await before the request.
  return (req) => {
    const now = pacer.tryAcquire();
    return now !== undefined ? settle(req, now) : pacer.acquire(req.waitSignal ?? req.signal).then((sentAt) => settle(req, sentAt));
  };
}
