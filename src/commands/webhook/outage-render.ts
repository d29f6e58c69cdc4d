// A forward target's outage in words: the first failure as a line, then one line of state (down for, tries,
// deliveries waiting) that a terminal updates in place, a line again only when the failure changes or the
// app is back, and, piped, a reminder when one is due (the engine's OutageTracker decides when).
import { type LivePart, liveText } from '../../io/live-line.js';
import { plural, terminalText } from '../../io/text.js';
import type { ForwardEvent } from '../../webhook/forwarder.js';
import { type OutageState, type OutageStep, OutageTracker } from '../../webhook/outage.js';
import { forwardLine as lineOf } from './render.js';

/** What one forward try changes on screen. */
interface OutageOutput {
  /** A line to print for good (a forward that worked, the first failure, a new kind of failure, back up). */
  line?: string;
  /** The state of an outage: a terminal shows it in place (fitted to its width), updated at every try. */
  live?: LivePart;
  /** The same state, due as a line of its own now (piped output: a rare reminder). */
  reminder?: string;
  /** The outage is over: a line shown in place goes. */
  over?: boolean;
}

/** Whole seconds as `42s`, `1m 05s`, `2h 03m`. */
export function elapsedText(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < 60) return `${seconds}s`;
  const two = (n: number) => String(n).padStart(2, '0');
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m ${two(seconds % 60)}s`;
  return `${Math.floor(seconds / 3600)}h ${two(Math.floor(seconds / 60) % 60)}m`;
}

/** What is wrong first (`forward down: 503`), then for how long and how much waits, then the target. */
export function outageLive(url: string, state: OutageState): LivePart {
  return {
    state: `forward down: ${state.reason}`,
    detail: `for ${elapsedText(state.downMs)}, ${plural(state.tries, 'try', 'tries')}, ${plural(state.pending, 'delivery', 'deliveries')} waiting; retrying`,
    url,
  };
}

/** What a forward try to `url` shows, given what it did to the outage; `named`: its lines name the URL (one of several routes). */
export function outageOutput(url: string, event: ForwardEvent, step: OutageStep, named = false): OutageOutput {
  const forwardLine = (e: ForwardEvent) => lineOf(e, named ? url : undefined);
  switch (step.phase) {
    case 'up':
      return { line: forwardLine(event) };
    case 'end':
      return { line: terminalText(`${forwardLine(event)}  (back up after ${elapsedText(step.downMs)} down, ${plural(step.tries, 'try', 'tries')})`), over: true };
    case 'start':
      return { line: forwardLine(event), live: outageLive(url, step.state) };
    case 'down': {
      const live = outageLive(url, step.state);
      if (step.news) return { live, line: forwardLine(event) };
      return step.remind ? { live, reminder: liveText([live]) } : { live };
    }
  }
}

/** A tracker and its words together: the forward tries to one target as a person sees them, try by try. */
export class ForwardOutage {
  private readonly tracker: OutageTracker;

  constructor(
    private readonly url: string,
    schedule?: ConstructorParameters<typeof OutageTracker>[0],
  ) {
    this.tracker = new OutageTracker(schedule);
  }

  /** Whether the target is down now. */
  get down(): boolean {
    return this.tracker.down;
  }

  /** The live state at `now`, between tries; undefined when up. */
  livePart(now: number): LivePart | undefined {
    const state = this.tracker.state(now);
    return state && outageLive(this.url, state);
  }

  /** What this forward try changes, at time `now` (ms). */
  next(e: ForwardEvent, now: number): OutageOutput {
    return outageOutput(this.url, e, this.tracker.next(e, now));
  }
}
