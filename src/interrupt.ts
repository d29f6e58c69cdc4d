// Ctrl-C and SIGTERM, handled in one place for every long-running command (import, webhook listen and
// replay, the emulator): the first asks the run to stop gracefully, the second ends the process at once.

/** The signals that ask a run to stop. */
export type StopSignal = 'SIGINT' | 'SIGTERM';

/** Where stop signals come from: the process, or a test that fires them by hand. */
export interface SignalSource {
  /** Call `listener` on each SIGINT/SIGTERM until the returned function is called. */
  listen(listener: (signal: StopSignal) => void): () => void;
  /** End the process at once with `code` (a second Ctrl-C: the user does not want to wait). */
  exitNow(code: number): void;
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
  exitNow: (code) => process.exit(code),
};

/** A run that can be interrupted: `signal` aborts on the first stop signal, `stopped` resolves with it. */
export interface Interruptible {
  readonly signal: AbortSignal;
  readonly stopped: Promise<StopSignal>;
  /** Stop listening (the run is over); Node's default signal handling comes back. */
  dispose(): void;
}

/**
 * Watch for stop signals: on the first, `onFirst` runs (say what happens next) and `signal` aborts;
 * on the second, the process exits at once with 130 (interrupted).
 */
export function interruptible(source: SignalSource, onFirst?: (signal: StopSignal) => void): Interruptible {
  const controller = new AbortController();
  let resolveStopped: (s: StopSignal) => void = () => {};
  const stopped = new Promise<StopSignal>((resolve) => (resolveStopped = resolve));
  const dispose = source.listen((s) => {
    if (controller.signal.aborted) return source.exitNow(130);
    onFirst?.(s);
    controller.abort(s);
    resolveStopped(s);
  });
  return { signal: controller.signal, stopped, dispose };
}
