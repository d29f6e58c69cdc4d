// Preloaded with `node --import` by tuning.e2e.test.ts: records the largest young generation (new space) seen
// after any collection and writes it, in bytes, to $YOUNG_GENERATION_OUT when the process exits. It observes
// the real entry point and command without adding anything to cardboard itself.
import { writeFileSync } from 'node:fs';
import { PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics } from 'node:v8';

let largest = 0;
new PerformanceObserver(() => {
  const young = getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
  largest = Math.max(largest, young?.space_size ?? 0);
}).observe({ entryTypes: ['gc'] });
process.on('exit', () => writeFileSync(process.env.YOUNG_GENERATION_OUT, String(largest)));
