// Peak RSS of `cardboard import` and `--dry-run` as the file grows (10k, 100k, 1M rows). Peak RSS is the
// child's own maximum resident set (GNU time %M, else polled VmHWM), a figure noise hardly moves: one run each.
import { csvFile } from '../lib/csv.mjs';
import { startEmulator } from '../lib/emulator.mjs';
import { log, sig } from '../lib/proc.mjs';
import { importOnce } from './import-speed.mjs';

const LIMIT_MB = 150;
/** "Flat": the peak at the largest file is at most this multiple of the peak at the smallest. */
const FLAT = 1.25;

const mb = (kb) => sig(kb / 1024);

function row(label, sizes, peaks) {
  const growth = peaks.at(-1) / peaks[0];
  const max = Math.max(...peaks);
  return {
    scenario: `${label}: peak RSS at ${sizes.map((n) => (n >= 1e6 ? `${n / 1e6}M` : `${n / 1e3}k`)).join(' / ')} rows`,
    cardboard: `${peaks.map((kb) => mb(kb)).join(' / ')} MB`,
    beside: '—',
    ratio: sig(growth),
    ratioText: `×${sig(growth)} from smallest to largest`,
    goal: `≤ ${LIMIT_MB} MB, flat (≤ ×${FLAT})`,
    met: max / 1024 <= LIMIT_MB && growth <= FLAT,
  };
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
  const data = { sizes, importPeakMb: real.map(mb), dryRunPeakMb: dry.map(mb), importRowsPerSec: rates };
  return { data, rows: [row('import', sizes, real), row('import --dry-run', sizes, dry)] };
}
