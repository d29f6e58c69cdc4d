// Peak RSS of `cardboard import` and `--dry-run` as the file grows (10k, 100k, 1M rows). Peak RSS is the
// child's own maximum resident set (GNU time %M, else polled VmHWM), a figure noise hardly moves: one run each.
// Two more figures say what the peak is made of: the floor of any command that sends one request
// (`cardboard schema`), and the largest dry run with V8's heap held small, which only completes if the
// memory the rows keep alive stays flat.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { csvFile } from '../lib/csv.mjs';
import { startEmulator } from '../lib/emulator.mjs';
import { childEnv, log, runCli, sig } from '../lib/proc.mjs';
import { importOnce } from './import-speed.mjs';

const LIMIT_MB = 150;
/** "Flat": the peak at the largest file is at most this multiple of the peak at the smallest. */
const FLAT = 1.25;

const mb = (kb) => sig(kb / 1024);
const size = (n) => (n >= 1e6 ? `${n / 1e6}M` : `${n / 1e3}k`);

function row(label, sizes, peaks) {
  const growth = peaks.at(-1) / peaks[0];
  const max = Math.max(...peaks);
  return {
    scenario: `${label}: peak RSS at ${sizes.map(size).join(' / ')} rows`,
    cardboard: `${peaks.map((kb) => mb(kb)).join(' / ')} MB`,
    beside: '—',
    ratio: sig(growth),
    ratioText: `×${sig(growth)} from smallest to largest`,
    goal: `≤ ${LIMIT_MB} MB, flat (≤ ×${FLAT})`,
    met: max / 1024 <= LIMIT_MB && growth <= FLAT,
  };
}

/** Node flags of the diagnostic run: a young generation of 4 MB semi-spaces and a 48 MB old space. */
const SMALL_HEAP = ['--max-semi-space-size=4', '--max-old-space-size=48'];

/** Peak RSS of `cardboard schema`: module loading plus the first request. */
async function floorKb() {
  const emu = await startEmulator();
  const config = mkdtempSync(join(tmpdir(), 'cardboard-bench-'));
  try {
    return (await runCli(['schema', '--json'], { rss: true, env: childEnv({ ...emu.env, CARDBOARD_CONFIG_DIR: config }), stdoutFile: '/dev/null' })).rssKb;
  } finally {
    rmSync(config, { recursive: true, force: true });
    await emu.close();
  }
}

/** Run the memory scenario. */
export async function memory({ quick }) {
  const sizes = quick ? [10_000, 100_000] : [10_000, 100_000, 1_000_000];
  const dry = [];
  const real = [];
  const rates = [];
  for (const n of sizes) {
    const file = csvFile(n);
    const emu = await startEmulator();
    try {
      log(`dry run, ${n} rows`);
      dry.push((await importOnce(file, n, ['--dry-run'], emu)).rssKb);
    } finally {
      await emu.close();
    }
    log(`import, ${n} rows`);
    const r = await importOnce(file, n);
    real.push(r.rssKb);
    rates.push(sig(r.rowsPerSec));
  }
  log('floor: cardboard schema');
  const floor = await floorKb();
  const largest = sizes.at(-1);
  // The real import under the small heap at the middle size: the largest would double the scenario's time.
  const middle = sizes.at(-2);
  log(`dry run, ${largest} rows, and import, ${middle} rows, under node ${SMALL_HEAP.join(' ')}`);
  const emu = await startEmulator();
  let small;
  try {
    small = (await importOnce(csvFile(largest), largest, ['--dry-run'], emu, SMALL_HEAP)).rssKb;
  } finally {
    await emu.close();
  }
  const smallImport = (await importOnce(csvFile(middle), middle, [], undefined, SMALL_HEAP)).rssKb;
  const data = {
    sizes,
    importPeakMb: real.map(mb),
    dryRunPeakMb: dry.map(mb),
    importRowsPerSec: rates,
    schemaPeakMb: mb(floor),
    smallHeapDryRunPeakMb: mb(small),
    smallHeapImportPeakMb: mb(smallImport),
    smallHeapFlags: SMALL_HEAP,
  };
  const info = (scenario, cardboard) => ({ scenario, cardboard, beside: '—', ratio: null, ratioText: '—', goal: 'explains the peak', met: null });
  return {
    data,
    rows: [
      row('import', sizes, real),
      row('import --dry-run', sizes, dry),
      info('floor: `cardboard schema` (modules + one request)', `${mb(floor)} MB`),
      info(`import --dry-run, ${size(largest)} rows, \`node ${SMALL_HEAP.join(' ')}\``, `${mb(small)} MB, completed`),
      info(`import, ${size(middle)} rows, \`node ${SMALL_HEAP.join(' ')}\``, `${mb(smallImport)} MB, completed`),
    ],
  };
}
