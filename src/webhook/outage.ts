// An outage of the --forward-to target: when it began, how many tries failed, whether a failure is news,
// and when a reminder is due. The listen engine keeps one and reports each forward try with its step;
// the words a person reads are the command's.
import type { ForwardEvent } from './forwarder.js';

/**
 * When piped output repeats that the target is still down: after 1 minute, then each time the outage has
 * doubled (2, 4, … 64 minutes), then every hour. A day's outage is about 30 lines, not 17,000.
 */
const REMINDERS = { firstMs: 60_000, everyMaxMs: 3_600_000 };

/** An outage as it stands: what failed last, for how long, how often, and what waits. */
export interface OutageState {
  /** Why the last try failed, short: `503`, `ECONNREFUSED`. */
  reason: string;
  downMs: number;
  /** Tries failed since the outage began. */
  tries: number;
  /** Deliveries waiting, as of the last try. */
  pending: number;
}

/** What one forward try did to the outage. */
export type OutageStep =
  /** It worked, and the target was up: no outage. */
  | { phase: 'up' }
  /** It worked after an outage of `downMs` and `tries` tries, this one included: the outage is over. */
  | { phase: 'end'; downMs: number; tries: number }
  /** The first failure: an outage begins. */
  | { phase: 'start'; state: OutageState }
  /** Another failure: `news` when it failed in a new way (a 500 became a refused connection), `remind` when a reminder is due. */
  | { phase: 'down'; state: OutageState; news: boolean; remind: boolean };

/** Why a try failed, to tell one kind of failure from another: the status, else the network error. */
function reason(e: ForwardEvent): string {
  return e.answer.status === undefined ? `no answer (${e.answer.error ?? 'failed'})` : `${e.answer.status}`;
}

/** The same, short, for a state: `503`, `ECONNREFUSED`. */
function shortReason(e: ForwardEvent): string {
  return e.answer.status === undefined ? (e.answer.error ?? 'no answer') : `${e.answer.status}`;
}

/**
 * Follows the forwarder's tries: an outage begins at the first failure and ends at the next success;
 * between them only a new kind of failure is news, and a reminder is due on the REMINDERS schedule.
 * Pure: the caller passes the time of each try.
 */
export class OutageTracker {
  private downSince: number | undefined;
  private tries = 0;
  private lastReason = '';
  private nextReminder = 0;
  private last: ForwardEvent | undefined;

  constructor(private readonly schedule = REMINDERS) {}

  /** Whether the target is down now. */
  get down(): boolean {
    return this.downSince !== undefined;
  }

  /** The outage at `now`, between tries (its clock keeps running); undefined when the target is up. */
  state(now: number): OutageState | undefined {
    return this.downSince === undefined || !this.last ? undefined : this.stateOf(this.last, now);
  }

  /** What this forward try does to the outage, at time `now` (ms). */
  next(event: ForwardEvent, now: number): OutageStep {
    this.last = event;
    if (event.ok) {
      if (this.downSince === undefined) return { phase: 'up' };
      const step: OutageStep = { phase: 'end', downMs: now - this.downSince, tries: this.tries + 1 };
      this.downSince = undefined;
      return step;
    }
    const why = reason(event);
    if (this.downSince === undefined) {
      this.downSince = now;
      this.tries = 1;
      this.lastReason = why;
      this.nextReminder = this.schedule.firstMs;
      return { phase: 'start', state: this.stateOf(event, now) };
    }
    this.tries++;
    const news = why !== this.lastReason;
    this.lastReason = why;
    // A try that is news is a line of its own already: no reminder with it.
    const remind = !news && now - this.downSince >= this.nextReminder;
    while (now - this.downSince >= this.nextReminder) this.nextReminder += Math.min(this.nextReminder, this.schedule.everyMaxMs);
    return { phase: 'down', state: this.stateOf(event, now), news, remind };
  }

  private stateOf(e: ForwardEvent, now: number): OutageState {
    return { reason: shortReason(e), downMs: now - this.downSince!, tries: this.tries, pending: e.pending };
  }
}
