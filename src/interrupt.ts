// The run's one cancellation. main builds a Cancellation once; every wait of every command takes one of its
// two signals: `signal` ("stop now": requests in flight, sleeps, stdin, prompts, page walks end) and its
// child `drain` ("take no new work": the import stops taking rows, a listener stops accepting). Ctrl-C
// aborts `signal` at once, except while a long run drains: then the first Ctrl-C aborts `drain` only,
// and `signal` follows after the run's grace. A second Ctrl-C always ends the process at once. A process
// stopped by a signal ends by it (exitBySignal), after its cleanup: a shell running it in a loop, xargs,
// make or a `set -e` script then stops too, as it would for any program killed by Ctrl-C.
import { setMaxListeners } from 'node:events';
import type { Clock } from './clock.js';
import { ExitCode } from './errors.js';

/** The signals that ask a run to stop. */
export type StopSignal = 'SIGINT' | 'SIGTERM';

/** Why a run was stopped: a signal, or the reader of stdout went away (`| head -1`), which is no failure. */
type StopReason = StopSignal | 'broken-pipe';

/** The stop signals, as a value. */
const STOP_SIGNALS: readonly StopSignal[] = ['SIGINT', 'SIGTERM'];

/** Whether `reason` is a stop signal (a run stopped by a broken pipe, or not stopped, is not). */
export function isStopSignal(reason: unknown): reason is StopSignal {
  return reason === 'SIGINT' || reason === 'SIGTERM';
}

/**
 * The status a shell reports for a process that `signal` ended, 128 + its number: 130 for SIGINT, 143 for
 * SIGTERM. Written out, not read from os.constants: the code where a process cannot end by a signal of
 * its own (Windows) must still be the one the docs give.
 */
export function signalExitCode(signal: StopSignal): number {
  return signal === 'SIGINT' ? ExitCode.interrupted : ExitCode.terminated;
}

/** Where stop signals come from: the process, or a test that fires them by hand. */
export interface SignalSource {
  /** Call `listener` on each SIGINT/SIGTERM until the returned function is called. */
  listen(listener: (signal: StopSignal) => void): () => void;
  /** End the process at once by `signal` (a second Ctrl-C: the user does not want to wait). */
  exitNow(signal: StopSignal): void;
}

/** The real process's signals. While a listener is registered, Node's default (death by the signal) is off. */
export const processSignals: SignalSource = {
  listen(listener) {
    const onInt = () => listener('SIGINT');
    const onTerm = () => listener('SIGTERM');
    process.on('SIGINT', onInt);
    process.on('SIGTERM', onTerm);
    return () => {
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
    };
  },
  exitNow: (signal) => exitBySignal(signal),
};

/**
 * End the process by `signal`, as a program that never caught it would end: the shell sees death by the
 * signal, not an exit with a status. Bash in a `for` loop, xargs and make stop when a command is killed
 * by SIGINT (they take it as the user's interrupt), and go on when it exits 130 (the command caught
 * the signal and chose to carry on), so a command that cleans up after Ctrl-C must end by it again.
 *
 * It is process.exit(128 + n) whose last 'exit' hook sends the signal to the process itself: every
 * other 'exit' hook runs first (a lock file is deleted, atomically's temporary files go), every listener of
 * the signal (ours, and any a library left: when-exit, signal-exit) is removed first so Node's default,
 * death, applies, and Linux delivers a signal a thread sends its own process before kill() returns.
 * Where that cannot be done (Windows has no such signals, kill fails) or does not end the process, the
 * exit goes on with 130 or 143.
 */
export function exitBySignal(signal: StopSignal): never {
  const code = signalExitCode(signal);
  if (process.platform !== 'win32') {
    process.once('exit', () => {
      for (const s of STOP_SIGNALS) process.removeAllListeners(s);
      try {
        process.kill(process.pid, signal);
      } catch {
        // The exit goes on with `code`.
      }
    });
  }
  process.exit(code);
}

/**
 * Load a module that hooks SIGINT and SIGTERM as a side effect of its import, and take those hooks out
 * again. when-exit (loaded by conf, through atomically) answers either signal by sending it to the process
 * once more after its own callbacks: with the run's handler installed, that second signal reads as a
 * second Ctrl-C, so a graceful stop (a listener winding down, an import draining) would end at once.
 * Its 'exit' hook, which removes atomically's temporary files, stays; other signals keep their default.
 */
export async function importWithoutStopHooks<T>(load: () => Promise<T>): Promise<T> {
  const before = new Map(STOP_SIGNALS.map((s) => [s, new Set(process.listeners(s))]));
  try {
    return await load();
  } finally {
    for (const s of STOP_SIGNALS) for (const listener of process.listeners(s)) if (!before.get(s)!.has(listener)) process.off(s, listener);
  }
}

/** A source that never fires: contexts built outside main (tests, library use) leave the process's signals alone. */
export const noSignals: SignalSource = {
  listen: () => () => {},
  exitNow: (signal) => {
    throw new Error(`exitNow(${signal}) without a signal source`);
  },
};

/** A stop that can be pulled by its owner: the child of a signal (an engine's own fatal stop). */
export interface Stopper {
  readonly signal: AbortSignal;
  abort(reason?: unknown): void;
}

/**
 * A signal that aborts when `parent` does, or when its owner calls abort(): the only way code below main
 * makes a stop of its own (an engine ending on a fatal answer, a forwarder shutting down). Many waits share
 * it on purpose (one per request in flight), and each removes its listener when it ends, so Node's
 * listener-leak warning (10 by default) is off for it.
 */
export function childStop(parent?: AbortSignal): Stopper {
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  if (parent) {
    if (parent.aborted) controller.abort(parent.reason);
    else {
      const follow = () => controller.abort(parent.reason);
      parent.addEventListener('abort', follow, { once: true });
      // The child ends when the parent does, and the parent's listener goes with it.
      controller.signal.addEventListener('abort', () => parent.removeEventListener('abort', follow), { once: true });
    }
  }
  return { signal: controller.signal, abort: (reason?: unknown) => controller.abort(reason) };
}

/** How a long run drains: what to say on the first signal, and how long work in flight may go on after it. */
interface DrainOptions {
  /** Said on the first signal (what happens next). */
  onFirst?(signal: StopSignal): void;
  /** After the first Ctrl-C, `signal` aborts this much later (requests in flight are cut off). Default: never. */
  graceMs?: number;
  /**
   * Ctrl-C belongs to a child in the foreground (the pager, in our process group, gets it too and decides):
   * it is not acted on at all, however often it comes. SIGTERM still stops now.
   */
  leaveInterrupts?: boolean;
}

/**
 * What a long run uses of the run's cancellation besides its stop signal (the context's `drain`): the signal
 * that says "take no new work", and the window in which the first Ctrl-C only drains.
 */
export interface Drain {
  /** Aborted by the first Ctrl-C of a draining run, and whenever the run's stop signal is. */
  readonly signal: AbortSignal;
  /** Until the returned function is called, the first Ctrl-C only drains (Cancellation.drainOn). */
  enable(options?: DrainOptions): () => void;
}

/**
 * The run's signal tree, listening to `source` from construction until dispose(). SIGTERM and a broken
 * pipe always stop now; Ctrl-C stops now unless a run is draining (drainOn), and a second signal ends the
 * process at once by that signal (exitNow).
 */
export class Cancellation {
  private readonly root = childStop();
  private readonly child = childStop(this.root.signal);
  private drainer: DrainOptions | undefined;
  private readonly unlisten: () => void;

  constructor(
    private readonly source: SignalSource,
    private readonly clock: Pick<Clock, 'sleep'>,
  ) {
    this.unlisten = source.listen((s) => this.onSignal(s));
  }

  /** Stop now: every wait ends, requests in flight are aborted (CancelledError). */
  get signal(): AbortSignal {
    return this.root.signal;
  }

  /** Take no new work: aborted by the first Ctrl-C of a draining run, and whenever `signal` is. */
  get drain(): AbortSignal {
    return this.child.signal;
  }

  /** Why the run was stopped, once it was. */
  get reason(): StopReason | undefined {
    return this.drain.aborted ? (this.drain.reason as StopReason) : undefined;
  }

  /** Stop now for `reason` (a broken pipe; main and tests). */
  stop(reason: StopReason): void {
    this.root.abort(reason);
  }

  /**
   * While the returned function is not called, the first Ctrl-C only drains (`drain` aborts, `onFirst` is
   * told, and `signal` follows after `graceMs`). Outside such a window a Ctrl-C stops at once: a run reading
   * its input or the board before it starts sending has nothing to finish.
   */
  drainOn(options: DrainOptions = {}): () => void {
    this.drainer = options;
    return () => {
      if (this.drainer === options) this.drainer = undefined;
    };
  }

  /** The drain as a long run uses it: `drain` and drainOn. */
  draining(): Drain {
    return Object.freeze({ signal: this.drain, enable: (options?: DrainOptions) => this.drainOn(options) });
  }

  /** Stop listening: Node's default signal handling comes back. */
  dispose(): void {
    this.unlisten();
  }

  private onSignal(s: StopSignal): void {
    const drainer = this.drainer;
    if (s === 'SIGINT' && drainer?.leaveInterrupts) return;
    if (this.drain.aborted) return this.source.exitNow(s);
    if (s === 'SIGTERM' || !drainer) return this.stop(s);
    this.child.abort(s);
    drainer.onFirst?.(s);
    const grace = drainer.graceMs;
    if (grace !== undefined && Number.isFinite(grace)) void this.clock.sleep(grace, this.signal).then(() => this.stop(s));
  }
}

/** Resolves with the reason when `signal` aborts (at once if it has). */
export function whenAborted(signal: AbortSignal): Promise<unknown> {
  if (signal.aborted) return Promise.resolve(signal.reason);
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(signal.reason), { once: true }));
}
