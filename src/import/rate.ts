// The one rate of an import, shown by the live progress line, the summary and --json alike:
// with a sum of their own each, they disagreed.

/** Rows a run has finished and when it started: what a rate is computed from. */
interface RateInput {
  /** Rows finished so far, whatever their state. */
  rows: number;
  /** Of those, rows an earlier run finished (resumed from the journal): counted instantly, so left out. */
  skipped: number;
  /** Milliseconds since the engine started (its first row was read). */
  elapsedMs: number;
}

/**
 * Rows per second: rows this run finished (not `skipped`) over the seconds since the engine started;
 * 0 before any time has passed. A resumed run is not flattered by the rows it did not do.
 */
export function rowsPerSecond(r: RateInput): number {
  return r.elapsedMs > 0 ? ((r.rows - r.skipped) / r.elapsedMs) * 1000 : 0;
}

/** `428.6 rows/s`: how people read it, in the progress line and the summary. */
export function rateText(perSecond: number): string {
  return `${perSecond.toFixed(1)} rows/s`;
}
