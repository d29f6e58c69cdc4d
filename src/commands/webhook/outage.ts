import { type LivePart, liveText } from '../../io/live-line.js';
import { plural, terminalText } from '../../io/text.js';
import type { ForwardEvent } from '../../webhook/forwarder.js';
import { forwardLine } from './render.js';

/** What one forward try changes on screen. */
export interface OutageOutput {
  /** A line to print for good (a forward that worked, the first failure, a new kind of failure, back up). */
  line?: string;
  /** The state of an outage: a terminal shows it in place (fitted to its width), updated at every try. */
  live?: LivePart;
  /** The same state, due as a line of its own now (piped output: a rare reminder, see REMINDERS). */
  reminder?: string;
  /** The outage is over: a line shown in place goes. */
  over?: boolean;
}

/**
 * When piped output repeats that the target is still down: after 1 minute, then each time the outage has
 * doubled (2, 4, … 64 minutes), then every hour. A day's outage is about 30 lines, not 17,000.
 */
export const REMINDERS = { firstMs: 60_000, everyMaxMs: 3_600_000 };

/** Whole seconds as `42s`, `1m 05s`, `2h 03m`. */
export function elapsedText(ms: number): string {
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  const two = (n: number) => String(n).padStart(2, '0');
  if (s < 3600) return `${Math.floor(s / 60)}m ${two(s % 60)}s`;
  return `${Math.floor(s / 3600)}h ${two(Math.floor(s / 60) % 60)}m`;
}

/** Why a try failed, to tell one kind of failure from another: the status, else the network error. */
function reason(e: ForwardEvent): string {
  return e.answer.status === undefined ? `no answer (${e.answer.error ?? 'failed'})` : `${e.answer.status}`;
}

/** The same, short, for the state at the head of the live line: `503`, `ECONNREFUSED`. */
function shortReason(e: ForwardEvent): string {
  return e.answer.status === undefined ? (e.answer.error ?? 'no answer') : `${e.answer.status}`;
}

/**
 * Turns the forwarder's tries into what a person needs while the app is down, instead of a retry line every
 * 5 s for ever: the first failure as a line, then one line of state (down for, tries, deliveries waiting)
 * that a terminal updates in place, a line again only when the failure changes or the app is back, and,
 * piped, a reminder on the REMINDERS schedule. Pure: the caller passes the time of each event.
 */
export class ForwardOutage {
  private downSince: number | undefined;
  private tries = 0;
  private lastReason = '';
  private nextReminder = 0;
  private last: ForwardEvent | undefined;

  constructor(
    private readonly url: string,
    private readonly schedule = REMINDERS,
  ) {}

  /** Whether the target is down now. */
  get down(): boolean {
    return this.downSince !== undefined;
  }

  /** The state at `now`, between tries (a terminal's clock of the outage); undefined when up. */
  livePart(now: number): LivePart | undefined {
    return this.downSince === undefined || !this.last ? undefined : this.state(this.last, now);
  }

  /** What this forward try changes, at time `now` (ms). */
  next(e: ForwardEvent, now: number): OutageOutput {
    this.last = e;
    if (e.ok) {
      if (this.downSince === undefined) return { line: forwardLine(e) };
      const was = `back up after ${elapsedText(now - this.downSince)} down, ${plural(this.tries + 1, 'try', 'tries')}`;
      this.downSince = undefined;
      return { line: terminalText(`${forwardLine(e)}  (${was})`), over: true };
    }
    const why = reason(e);
    if (this.downSince === undefined) {
      this.downSince = now;
      this.tries = 1;
      this.lastReason = why;
      this.nextReminder = this.schedule.firstMs;
      return { line: forwardLine(e), live: this.state(e, now) };
    }
    this.tries++;
    const out: OutageOutput = { live: this.state(e, now) };
    if (why !== this.lastReason) {
      // A new kind of failure (500 became a refused connection, say) is news: a line of its own.
      this.lastReason = why;
      out.line = forwardLine(e);
    } else if (now - this.downSince >= this.nextReminder) {
      out.reminder = liveText([out.live!]);
    }
    while (now - this.downSince >= this.nextReminder) this.nextReminder += Math.min(this.nextReminder, this.schedule.everyMaxMs);
    return out;
  }

  /** What is wrong first (`forward down: 503`), then for how long and how much waits, then the target. */
  private state(e: ForwardEvent, now: number): LivePart {
    const waiting = `${plural(e.pending, 'delivery', 'deliveries')} waiting`;
    return {
      state: `forward down: ${shortReason(e)}`,
      detail: `for ${elapsedText(now - this.downSince!)}, ${plural(this.tries, 'try', 'tries')}, ${waiting}; retrying`,
      url: this.url,
    };
  }
}
