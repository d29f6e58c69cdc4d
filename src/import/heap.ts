import { setFlagsFromString } from 'node:v8';

/**
 * Keep V8's heap at a steady size for a long streaming run (issue 4 §1: memory flat whatever the file's
 * size). Left alone, V8 grows the young generation to 2 × 16 MB once enough objects have survived, and
 * lets the old generation fill with garbage up to a limit set from the live size: peak RSS then depends on
 * how long the run lasts (measured, 1M-row dry run: 82 / 108 / 139 MB at 10k / 100k / 1M rows).
 *
 * `--max-semi-space-size` would say this best, but V8 reads it only at start-up, which would mean a flag
 * on the node command line (the shebang cannot carry one portably). These two are read each time V8
 * resizes the heap, so they take effect from here: the young generation stays at its initial size, and
 * the old generation's limit is the live size plus 10 %. Measured on Node 20.20: the same dry run peaks at
 * 76 / 77 / 78 MB, a 20,000-row import at 78 MB instead of 110, for ~10 % more CPU per row (the import is
 * bound by the network and the rate limit; the bench shows its rows/s beside the load generator's).
 * Both flags exist in every V8 since Node 20; where a newer V8 enforces a minimum growth factor the first
 * is ignored, without an error.
 */
export function keepHeapSmall(): void {
  setFlagsFromString('--semi-space-growth-factor=1');
  setFlagsFromString('--heap-growing-percent=10');
}
