// Peak RSS of `cardboard import` and `--dry-run` as the file grows (10k, 100k, 1M rows), on each Node given
// (`run.mjs --node PATH`, repeatable; default the Node running the bench), each run twice: with the V8
// settings of src/tuning.ts and with CARDBOARD_NO_TUNING=1, interleaved so that both see the same machine.
// Peak RSS is the child's own maximum resident set (GNU time %M, else polled VmHWM), a figure noise hardly
// moves: one run each. Two more figures say what the peak is made of: the floor of any command that sends
// one request (`cardboard schema`), and, on the first Node, the largest dry run with V8's heap held small,
// which only completes if the memory the rows keep alive stays flat.
import { execFileSync } from 'node:child_process';
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
const UNTUNED = { CARDBOARD_NO_TUNING: '1' };

const mb = (kb) => sig(kb / 1024);
const size = (n) => (n >= 1e6 ? `${n / 1e6}M` : `${n / 1e3}k`);
const peaks = (kbs) => `${kbs.map((kb) => mb(kb)).join(' / ')} MB`;

function row(label, sizes, tuned, untuned) {
  const growth = tuned.at(-1) / tuned[0];
  const max = Math.max(...tuned);
  return {
    scenario: `${label}: peak RSS at ${sizes.map(size).join(' / ')} rows`,
    cardboard: peaks(tuned),
    beside: `\`CARDBOARD_NO_TUNING=1\`: ${peaks(untuned)}`,
    ratio: sig(growth),
    ratioText: `×${sig(growth)} from smallest to largest`,
    goal: `≤ ${LIMIT_MB} MB, flat (≤ ×${FLAT})`,
    met: max / 1024 <= LIMIT_MB && growth <= FLAT,
  };
}

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

/** Run the memory scenario on `nodes` (paths of node binaries; the bench's own Node when none). */
export async function memory({ quick, nodes = [process.execPath] }) {
  const sizes = quick ? [10_000, 100_000] : [10_000, 100_000, 1_000_000];
  const lines = nodes.map((node) => ({
    node,
    version: execFileSync(node, ['--version'], { encoding: 'utf8' }).trim(),
    tuned: { dry: [], real: [], rates: [] },
    untuned: { dry: [], real: [], rates: [] },
  }));
  const variants = [['tuned', {}], ['untuned', UNTUNED]];
  for (const n of sizes) {
    const file = csvFile(n);
    for (const line of lines) {
      for (const [name, env] of variants) {
        const emu = await startEmulator();
        try {
          log(`node ${line.version}, ${name}: dry run, ${n} rows`);
          line[name].dry.push((await importOnce(file, n, ['--dry-run'], emu, [], { node: line.node, env })).rssKb);
        } finally {
          await emu.close();
        }
        log(`node ${line.version}, ${name}: import, ${n} rows`);
        const r = await importOnce(file, n, [], undefined, [], { node: line.node, env });
        line[name].real.push(r.rssKb);
        line[name].rates.push(sig(r.rowsPerSec));
      }
    }
  }
  for (const line of lines) {
    log(`node ${line.version}: floor, cardboard schema`);
    line.tuned.floor = await floorKb(line.node, {});
    line.untuned.floor = await floorKb(line.node, UNTUNED);
  }
  const first = lines[0];
  const largest = sizes.at(-1);
  // The real import under the small heap at the middle size: the largest would double the scenario's time.
  const middle = sizes.at(-2);
  log(`node ${first.version}: dry run, ${largest} rows, and import, ${middle} rows, under node ${SMALL_HEAP.join(' ')}`);
  const emu = await startEmulator();
  let small;
  try {
    small = (await importOnce(csvFile(largest), largest, ['--dry-run'], emu, SMALL_HEAP, { node: first.node })).rssKb;
  } finally {
    await emu.close();
  }
  const smallImport = (await importOnce(csvFile(middle), middle, [], undefined, SMALL_HEAP, { node: first.node })).rssKb;
  const figures = (v) => ({ importPeakMb: v.real.map(mb), dryRunPeakMb: v.dry.map(mb), importRowsPerSec: v.rates, schemaPeakMb: mb(v.floor) });
  const data = {
    sizes,
    nodes: lines.map((l) => ({ node: l.version, tuned: figures(l.tuned), untuned: figures(l.untuned) })),
    smallHeapNode: first.version,
    smallHeapDryRunPeakMb: mb(small),
    smallHeapImportPeakMb: mb(smallImport),
    smallHeapFlags: SMALL_HEAP,
  };
  const info = (scenario, cardboard, beside = '—') => ({ scenario, cardboard, beside, ratio: null, ratioText: '—', goal: 'explains the peak', met: null });
  const rows = [];
  for (const l of lines) {
    rows.push(row(`import, Node ${l.version}`, sizes, l.tuned.real, l.untuned.real));
    rows.push(row(`import --dry-run, Node ${l.version}`, sizes, l.tuned.dry, l.untuned.dry));
    rows.push(info(`floor: \`cardboard schema\` (modules + one request), Node ${l.version}`, `${mb(l.tuned.floor)} MB`, `\`CARDBOARD_NO_TUNING=1\`: ${mb(l.untuned.floor)} MB`));
  }
  rows.push(info(`import --dry-run, ${size(largest)} rows, \`node ${SMALL_HEAP.join(' ')}\`, Node ${first.version}`, `${mb(small)} MB, completed`));
  rows.push(info(`import, ${size(middle)} rows, \`node ${SMALL_HEAP.join(' ')}\`, Node ${first.version}`, `${mb(smallImport)} MB, completed`));
  return { data, rows };
}
