/**
 * Time and chance, passed to every engine and policy instead of read from globals, so tests run them in
 * simulated time (a discrete-event clock) and the real process passes `realClock`.
 */
export interface Clock {
  /** Milliseconds since the epoch (or since the simulation began). */
  now(): number;
  /** Resolve after `ms`, or early (without throwing) when `signal` aborts: callers check `signal.aborted`. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** A number in [0, 1): the jitter of backoffs. */
  random(): number;
}

/** Wall-clock time, timers and Math.random. */
export const realClock: Clock = {
  now: () => Date.now(),
  random: () => Math.random(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve) => {
      if (signal?.aborted || ms <= 0) return resolve();
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal?.addEventListener('abort', done, { once: true });
    }),
};
