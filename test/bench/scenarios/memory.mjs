// Peak RSS of `cardboard import --concurrency 8` and `--dry-run` as the file grows, on each Node measured (8 rows
// in flight: the most the import holds at once, and a 1M-row import in minutes, not the quarter of an hour one
// row at a time takes). Peak RSS is the
// child's own maximum resident set (GNU time %M, else polled VmHWM), a figure noise hardly moves: one run each.
// To keep a run with three extra Node lines near half an hour, the sizes are not the same everywhere:
// - the bench's own Node: import and dry run at 10k, 100k and 1M rows; at the largest size only, the same
//   runs with CARDBOARD_NO_TUNING=1 (what the V8 settings of src/tuning.ts save) and with the ref's CLI;
// - each other Node line (--node): dry run at 10k and 1M, import at 10k and 100k (a 1M-row import takes
//   ~4 minutes; its flatness is shown on the bench's Node, and 10k -> 100k shows the trend on the others).
// Two more figures say what the peak is made of: the floor of any command that sends one request
// (`cardboard schema`) on each Node, and, on the bench's Node, the largest dry run and the middle import with
// V8's heap held small, which only complete if the memory the rows keep alive stays flat.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { csvFile } from '../lib/csv.mjs';
import { startEmulator } from '../lib/emulator.mjs';
import { childEnv, log, NotInRef, runCli } from '../lib/proc.mjs';
import { notIn, num, sig } from '../lib/stats.mjs';
import { importOnce } from './import-speed.mjs';

const LIMIT_MB = 150;
/** "Flat": the peak at the largest file is at most this multiple of the peak at the smallest. */
const FLAT = 1.25;
const UNTUNED = { CARDBOARD_NO_TUNING: '1' };

const mb = (kb) => sig(kb / 1024);
const size = (n) => (n >= 1e6 ? `${n / 1e6}M` : `${n / 1e3}k`);
const peaks = (kbs) => `${kbs.map((kb) => num(mb(kb))).join(' / ')} MB`;

/** Node flags of the diagnostic run: a young generation of 4 MB semi-spaces and a 48 MB old space. */
const SMALL_HEAP = ['--max-semi-space-size=4', '--max-old-space-size=48'];

/** Peak RSS of `cardboard schema`: module loading plus the first request. */
async function floorKb(node, env) {
  const emu = await startEmulator();
  const config = mkdtempSync(join(tmpdir(), 'cardboard-bench-'));
  try {
    return (await runCli(['schema', '--json'], { node, rss: true, env: childEnv({ ...emu.env, CARDBOARD_CONFIG_DIR: config, ...env }), stdoutFile: '/dev/null' })).rssKb;
  } finally {
    rmSync(config, { recursive: true, force: true });
    await emu.close();
  }
}

/** Peak RSS (kB) of one dry run (an emulator is needed for the schema) or one import; null if the ref lacks it. */
async function peak(kind, n, run, nodeArgs = []) {
  log(`node ${run.version}${run.label ? `, ${run.label}` : ''}: ${kind === 'dry' ? 'dry run' : 'import'}, ${n} rows${nodeArgs.length ? ` under node ${nodeArgs.join(' ')}` : ''}`);
  const emu = kind === 'dry' ? await startEmulator() : undefined;
  try {
    return (await importOnce(csvFile(n), n, kind === 'dry' ? ['--dry-run'] : ['--concurrency', '8'], emu, nodeArgs, run)).rssKb;
  } catch (err) {
    if (err instanceof NotInRef) return null;
    throw err;
  } finally {
    await emu?.close();
  }
}

/** Run the memory scenario on `nodes` ([{ path, version }], the bench's own first). */
export async function memory({ quick, nodes, ref }) {
  const ownSizes = quick ? [10_000, 100_000] : [10_000, 100_000, 1_000_000];
  const extraSizes = quick ? { dry: [10_000, 100_000], real: [10_000, 50_000] } : { dry: [10_000, 1_000_000], real: [10_000, 100_000] };
  const largest = ownSizes.at(-1);
  const [own, ...extra] = nodes;
  const lines = [
    { ...own, sizes: { dry: ownSizes, real: ownSizes }, dry: [], real: [] },
    ...extra.map((n) => ({ ...n, sizes: extraSizes, dry: [], real: [] })),
  ];
  for (const line of lines) {
    const run = { node: line.path, version: line.version };
    for (const n of line.sizes.dry) line.dry.push(await peak('dry', n, run));
    for (const n of line.sizes.real) line.real.push(await peak('real', n, run));
    log(`node ${line.version}: floor, cardboard schema`);
    line.floor = await floorKb(line.path, {});
  }
  // The comparisons, at the largest size on the bench's Node only.
  const ownRun = { node: own.path, version: own.version };
  const untuned = {
    dry: await peak('dry', largest, { ...ownRun, env: UNTUNED, label: 'CARDBOARD_NO_TUNING=1' }),
    real: await peak('real', largest, { ...ownRun, env: UNTUNED, label: 'CARDBOARD_NO_TUNING=1' }),
    floor: await floorKb(own.path, UNTUNED),
  };
  const refPeaks = ref
    ? { dry: await peak('dry', largest, { ...ownRun, client: ref, label: ref.label }), real: await peak('real', largest, { ...ownRun, client: ref, label: ref.label }) }
    : undefined;
  // The real import under the small heap at the middle size: the largest would double the scenario's time.
  const middle = ownSizes.at(-2);
  const small = await peak('dry', largest, ownRun, SMALL_HEAP);
  const smallImport = await peak('real', middle, ownRun, SMALL_HEAP);

  const data = {
    lines: lines.map((l) => ({ node: l.version, dry: { sizes: l.sizes.dry, peakMb: l.dry.map(mb) }, import: { sizes: l.sizes.real, peakMb: l.real.map(mb) }, schemaPeakMb: mb(l.floor) })),
    largestOnOwnNode: { node: own.version, rows: largest, untuned: { dryMb: mb(untuned.dry), importMb: mb(untuned.real), schemaMb: mb(untuned.floor) }, ref: refPeaks && { label: ref.label, dryMb: refPeaks.dry === null ? 'not in ref' : mb(refPeaks.dry), importMb: refPeaks.real === null ? 'not in ref' : mb(refPeaks.real) } },
    smallHeap: { node: own.version, flags: SMALL_HEAP, dryRunRows: largest, dryRunPeakMb: mb(small), importRows: middle, importPeakMb: mb(smallImport) },
  };
  const rows = [];
  const row = (label, sizes, kbs, compare) => {
    const growth = kbs.at(-1) / kbs[0];
    const fewer = sizes.at(-1) < largest ? ` (${size(largest)} on Node ${own.version} only, for time)` : '';
    const r = {
      scenario: `${label}: peak RSS at ${sizes.map(size).join(' / ')} rows${fewer}`,
      cardboard: peaks(kbs),
      beside: compare ? `\`CARDBOARD_NO_TUNING=1\` at ${size(largest)}: ${num(mb(compare.untuned))} MB` : '—',
      ratio: sig(growth),
      ratioText: `×${num(growth)} from smallest to largest`,
      goal: `≤ ${LIMIT_MB} MB, flat (≤ ×${FLAT})`,
      met: Math.max(...kbs) / 1024 <= LIMIT_MB && growth <= FLAT,
    };
    if (compare && ref) {
      if (compare.ref === null) r.ref = r.vsRef = notIn(ref.short);
      else {
        r.ref = `${ref.short} at ${size(largest)}: ${num(mb(compare.ref))} MB`;
        r.vsRef = `${num(kbs.at(-1) / compare.ref)}× at ${size(largest)}`;
      }
    }
    return r;
  };
  const info = (scenario, cardboard, beside = '—') => ({ scenario, cardboard, beside, ratio: null, ratioText: '—', goal: 'explains the peak', met: null });
  for (const [i, l] of lines.entries()) {
    const first = i === 0;
    rows.push(row(`import --concurrency 8, Node ${l.version}`, l.sizes.real, l.real, first ? { untuned: untuned.real, ref: refPeaks?.real } : undefined));
    rows.push(row(`import --dry-run, Node ${l.version}`, l.sizes.dry, l.dry, first ? { untuned: untuned.dry, ref: refPeaks?.dry } : undefined));
    rows.push(info(`floor: \`cardboard schema\` (modules + one request), Node ${l.version}`, `${num(mb(l.floor))} MB`, first ? `\`CARDBOARD_NO_TUNING=1\`: ${num(mb(untuned.floor))} MB` : '—'));
  }
  rows.push(info(`import --dry-run, ${size(largest)} rows, \`node ${SMALL_HEAP.join(' ')}\`, Node ${own.version}`, `${num(mb(small))} MB, completed`));
  rows.push(info(`import --concurrency 8, ${size(middle)} rows, \`node ${SMALL_HEAP.join(' ')}\`, Node ${own.version}`, `${num(mb(smallImport))} MB, completed`));
  return { data, rows, note: ref ? `memory: the ref at ${size(largest)} rows on Node ${own.version} only (a ${size(largest)}-row import takes minutes).` : undefined };
}
