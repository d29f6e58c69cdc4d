import { PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';

/** The young generation may grow to semi-spaces of this size, then no further (V8's default cap is 16 MB). */
const SEMI_SPACE_MB = 4;

/**
 * Keep V8's heap at a steady size for a long streaming run (issue 4 §1: memory flat whatever the file's
 * size). Left alone, V8 grows the young generation to 2 × 16 MB once enough objects have survived, and
 * lets the old generation fill with garbage up to a limit set from the live size, so the peak depends on
 * how long the run lasts (measured: a dry run peaked at 82 / 108 / 139 MB at 10k / 100k / 1M rows).
 *
 * `--max-semi-space-size=4` says this best, but V8 reads it only at start-up, which would mean a flag on
 * the node command line (a shebang cannot carry one portably). These two flags are read each time V8
 * resizes the heap, so they work from here: the old generation's limit becomes its live size plus 10 %,
 * and once a scavenge shows the young generation at 2 × 4 MB, its growth factor becomes 1. Measured on
 * Node 20.20 (see the bench): dry run 76 / 83 MB at 10k / 1M rows, import 82 / 85 MB at 20k / 200k rows;
 * stopping the young generation at 1 MB instead was as flat but cost ~4 µs of GC per row.
 * Both flags exist in every V8 since Node 20; a newer V8 that enforces a minimum growth factor ignores the
 * second, without an error.
 */
let kept = false;

export function keepHeapSmall(): void {
  if (kept) return;
  kept = true;
  setFlagsFromString('--heap-growing-percent=10');
  const limit = SEMI_SPACE_MB * 2 * 1024 * 1024;
  // A 'gc' entry follows every collection; after the one that grew the young generation to the limit,
  // stop its growth and stop observing (no cost for the rest of the run).
  const observer = new PerformanceObserver(() => {
    const young = getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
    if (young !== undefined && young.space_size >= limit) {
      setFlagsFromString('--semi-space-growth-factor=1');
      observer.disconnect();
    }
  });
  observer.observe({ entryTypes: ['gc'] });
}
