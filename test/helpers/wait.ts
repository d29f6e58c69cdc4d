/**
 * Waits with a deadline and a message. A wait that never ends should fail on its own, saying what it waited
 * for, well before the test timeout (120 s) or the kill of a child process (CHILD_KILL_MS) cut it short with
 * nothing to go on. The deadline catches a hang; it is not a timed assertion, so it is long enough for a
 * loaded machine (a test there runs 5-10x slower than on a quiet one).
 */

/** How long a wait lasts by default before it fails. */
export const WAIT_MS = 30_000;

/** Words for what a wait is for, or a function giving them when the wait fails. */
export type What = string | (() => string);

const words = (what: What) => (typeof what === 'string' ? what : what());

export interface WaitOptions {
  /**
   * What is awaited, in words: the failure reads "timed out after 30 s waiting for <what>". A function is
   * called at the failure, so it can tell the state things were left in. Default: the condition's source.
   */
  what?: What;
  /** Fail after this many milliseconds (default WAIT_MS). */
  timeoutMs?: number;
  /** Look again every this many milliseconds (default 10). */
  intervalMs?: number;
  /**
   * Checked after each look that found the condition false: a reason it can no longer come true (the
   * process being watched exited, say). The wait then fails at once with "<reason> before <what>".
   */
  failWhen?: () => string | false | undefined;
}

/** The error a wait fails with, naming what it waited for. */
export class WaitTimeout extends Error {
  constructor(what: What, timeoutMs: number) {
    super(`timed out after ${seconds(timeoutMs)} waiting for ${words(what)}`);
    this.name = 'WaitTimeout';
  }
}

const seconds = (ms: number) => (ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`);

/** The words for a condition without a `what`: its source, on one line. */
const sourceOf = (cond: () => unknown) => cond.toString().replace(/\s+/g, ' ');

/** Resolve once `cond()` is truthy, looking every `intervalMs`; reject with a WaitTimeout naming `what` at the deadline. */
export async function waitFor(cond: () => unknown, opts: WaitOptions = {}): Promise<void> {
  const timeoutMs = opts.timeoutMs ?? WAIT_MS;
  const what = opts.what ?? sourceOf(cond);
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    if (await cond()) return;
    const reason = opts.failWhen?.();
    if (reason) throw new Error(`${reason} before ${words(what)}`);
    if (performance.now() >= deadline) throw new WaitTimeout(what, timeoutMs);
    await new Promise((resolve) => setTimeout(resolve, opts.intervalMs ?? 10));
  }
}

/** `promise`, or a WaitTimeout naming `what` if it has not settled within `timeoutMs` (default WAIT_MS). */
export async function within<T>(promise: Promise<T>, opts: { what: What; timeoutMs?: number }): Promise<T> {
  const timeoutMs = opts.timeoutMs ?? WAIT_MS;
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new WaitTimeout(opts.what, timeoutMs)), timeoutMs);
  });
  try {
    return await Promise.race([promise, expired]);
  } finally {
    clearTimeout(timer);
  }
}
