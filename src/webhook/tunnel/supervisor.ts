// A supervisor of a child process that should run as long as the listener: it runs one life of the child
// after another, and between two it waits a pause that doubles after each short life. Not a retry of a
// request (src/http/retry.ts): nothing is sent again; a process that ended is started again.
import type { Clock } from '../../clock.js';

/** When a child is started again. */
interface RestartPolicy {
  /** The first restart waits this long; each short life in a row doubles it, up to restartMaxMs. */
  restartMs: number;
  restartMaxMs: number;
  /** A life at least this long starts the backoff afresh. */
  stableMs: number;
}

/**
 * How one life of the child ended: stopped by us, or failed. `upMs`: how long it had been up (working), or
 * absent when it never came up in this life.
 */
export type Life = { stopped: true } | { stopped: false; reason: string; upMs?: number };

interface SupervisorOptions {
  /** One life of the child, from its start to its end (or ours); `attempt` counts from 1. */
  life(attempt: number): Promise<Life>;
  policy: RestartPolicy;
  clock: Clock;
  /** Stop: the life in progress ends (`life` sees the same signal) and supervise() resolves. */
  signal: AbortSignal;
  /** A life ended; the next starts after `restartInMs`. */
  onRestart(reason: string, restartInMs: number): void;
  /** The error thrown when the first lives end before the child ever came up: it is not started again. */
  neverUp(reason: string): Error;
}

/**
 * Keep the child running until `signal`: after a life ends, wait, then start the next. Throws `neverUp`
 * when a life ends and none came up yet (a tool that cannot start would only fail again); once it came up,
 * every end is followed by a restart, without end.
 */
export async function supervise(opts: SupervisorOptions): Promise<void> {
  let wait = opts.policy.restartMs;
  let everUp = false;
  for (let attempt = 1; ; attempt++) {
    const life = await opts.life(attempt);
    if (life.stopped || opts.signal.aborted) return;
    everUp ||= life.upMs !== undefined;
    if (!everUp) throw opts.neverUp(life.reason);
    if (life.upMs !== undefined && life.upMs >= opts.policy.stableMs) wait = opts.policy.restartMs;
    opts.onRestart(life.reason, wait);
    await opts.clock.sleep(wait, opts.signal);
    if (opts.signal.aborted) return;
    wait = Math.min(wait * 2, opts.policy.restartMaxMs);
  }
}
