/**
 * V8 settings that lower cardboard's peak memory, made once by the entry point (`bin/cardboard.js`) before a
 * command runs. Each is made only on the V8 lines where it was measured to help (docs/benchmarks.md, peak
 * RSS of an import), because `v8.setFlagsFromString` has two ways to go wrong: a flag the running V8 does not know
 * prints `Error: unrecognized flag` on stderr, and with flags frozen (`node --freeze-flags-after-init`) any
 * call aborts the process (exit 133). So the flags are a fixed list per V8 line, all present in that line's
 * `node --v8-options`, and nothing is set when flags are frozen or `CARDBOARD_NO_TUNING=1`.
 */

/** What the decision depends on; the entry passes the real process's, tests pass their own. */
export interface TuningFacts {
  /** `process.versions.v8`, e.g. `11.3.244.8-node.38`. */
  v8: string;
  /** `process.execArgv`: the node options on the command line (Node refuses flag freezing in NODE_OPTIONS). */
  execArgv: readonly string[];
  env: Readonly<Record<string, string | undefined>>;
  /** The command word (`import`, `card`, …), or undefined for none. */
  command: string | undefined;
  /** Help was asked for (`--help`, `-h`): nothing will be sent. */
  help?: boolean;
}

/** The settings to make for one run. */
interface TuningPlan {
  /** Flags for `v8.setFlagsFromString`, set in this order. */
  flags: string[];
  /**
   * Stop the young generation's growth once its new space measures this many MB (`space_size` of
   * `getHeapSpaceStatistics`; set after a collection, see applyTuning), so it stays at 2 × 4 MB at most;
   * false: V8 sizes it.
   */
  capYoungGeneration: false | number;
}

/** What was measured to help on one V8 line (major.minor). */
interface LineTuning {
  /**
   * `--liftoff-only`: undici's HTTP parser (llhttp, WebAssembly) stays in V8's baseline tier, whose
   * optimising compile raises the peak of a long listing on Node 20 and 22. On Node 24 and 26 the flag set
   * at run time does not stop the tier-up (a hot WebAssembly function still reaches TurboFan;
   * test/tuning/tuning.test.ts shows it), so it is not set there.
   */
  liftoffOnly: boolean;
  /**
   * For an import: `--heap-growing-percent=10` (the old generation's limit is its live size plus 10 %) and
   * the young generation held at 2 × 4 MB, so the peak does not grow with the length of the run. These are
   * read each time V8 resizes the heap, so they work when set at run time, unlike `--max-semi-space-size`.
   */
  importHeap: boolean;
  /**
   * With importHeap, the size (MB) at which the young generation's growth stops. V8 up to 12 doubles it
   * (1, 2, 4, 8 MB), and its observer hears of each collection in time: it stops at 2 × 4 MB. Smaller costs
   * CPU: a smaller young generation is collected more often, for every row. V8 13 and 14 may grow it past
   * the cap before the observer hears (applyTuning), so there it stops at three quarters of 4 MB.
   */
  youngStopMb: number;
}

const LINES = new Map<string, LineTuning>([
  ['11.3', { liftoffOnly: true, importHeap: true, youngStopMb: 8 }], // Node 20
  ['12.4', { liftoffOnly: true, importHeap: true, youngStopMb: 8 }], // Node 22
  ['13.6', { liftoffOnly: false, importHeap: true, youngStopMb: 3 }], // Node 24
  ['14.6', { liftoffOnly: false, importHeap: true, youngStopMb: 3 }], // Node 26
]);

const NONE: TuningPlan = { flags: [], capYoungGeneration: false };

/** Commands that never load undici: tuning would only add to their start-up, and `--help` should cost little more than starting node. */
const NO_REQUESTS = new Set(['completion', 'help']);

/** True when the node command line froze V8's flags (the last of `--[no-]freeze-flags-after-init` wins). */
function flagsFrozen(execArgv: readonly string[]): boolean {
  let frozen = false;
  for (const arg of execArgv) {
    const flag = arg.replaceAll('_', '-');
    if (flag === '--freeze-flags-after-init' || flag === '--freeze-flags-after-init=true') frozen = true;
    else if (flag === '--no-freeze-flags-after-init' || flag === '--freeze-flags-after-init=false') frozen = false;
  }
  return frozen;
}

/** The V8 settings for this run: none on an unmeasured V8 line, with frozen flags or CARDBOARD_NO_TUNING=1. */
export function planTuning(facts: TuningFacts): TuningPlan {
  if (facts.env.CARDBOARD_NO_TUNING === '1' || flagsFrozen(facts.execArgv)) return NONE;
  if (facts.command === undefined || facts.help || NO_REQUESTS.has(facts.command)) return NONE;
  const line = LINES.get(facts.v8.split('.').slice(0, 2).join('.'));
  if (line === undefined) return NONE;
  const heap = line.importHeap && facts.command === 'import';
  const flags = [...(line.liftoffOnly ? ['--liftoff-only'] : []), ...(heap ? ['--heap-growing-percent=10'] : [])];
  return { flags, capYoungGeneration: heap ? line.youngStopMb : false };
}

/**
 * Make the plan's settings. `--max-semi-space-size` would say the young generation's cap best, but V8 reads
 * it only at start-up (a shebang cannot carry node flags portably), so the cap is made from a gc observer:
 * after the collection that grew the young generation to 2 × 4 MB, its growth factor becomes 1. A smaller
 * cap keeps the peak as flat but spends GC time on every imported row.
 */
export async function applyTuning(plan: TuningPlan): Promise<void> {
  if (plan.flags.length === 0 && !plan.capYoungGeneration) return;
  // Loaded only when there is something to set: a command that sets nothing pays nothing at start-up.
  const { getHeapSpaceStatistics, setFlagsFromString } = await import('node:v8');
  for (const flag of plan.flags) setFlagsFromString(flag);
  if (!plan.capYoungGeneration) return;
  const { PerformanceObserver } = await import('node:perf_hooks');
  // The observer runs only when the event loop does: a long synchronous stretch (loading undici's modules)
  // can hold several collections, each doubling the young generation, before it hears of the first. On
  // V8 13 and 14, where that happens, growth stops one doubling early (youngStopMb 3: 4 MB when heard in
  // time), leaving room for the one it may hear of late. V8 up to 13 sizes the young generation in powers
  // of two (1, 2, 4 MB); V8 14 also stops at sizes such as 3.75 MB and, once it has chosen to grow, keeps
  // growing towards the size chosen then even after the factor is set to 1, so the check cannot wait for a
  // full 4 MB. Three quarters of 4 MB catches both: 4 MB on V8 13, 3.75 or 4 MB on V8 14.
  const limit = plan.capYoungGeneration * 1024 * 1024;
  const observer = new PerformanceObserver(() => {
    const young = getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
    if (young !== undefined && young.space_size >= limit) {
      setFlagsFromString('--semi-space-growth-factor=1');
      observer.disconnect();
    }
  });
  observer.observe({ entryTypes: ['gc'] });
}
