// Import throughput against the unthrottled emulator: `cardboard import` beside autocannon posting the same
// body over the same number of connections (the ceiling), the docs' sequential `fetch` loop, and a shell
// `curl` loop. Every client gets a fresh emulator child, so no run inherits another's cards.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { csvFile, rowBody } from '../lib/csv.mjs';
import { BOARD, startEmulator, TOKEN } from '../lib/emulator.mjs';
import { childEnv, log, median, OUT, runCli, runMeasured, sig } from '../lib/proc.mjs';

const CONNECTIONS = 8;
const GOAL = 0.9;
const peer = (name) => fileURLToPath(new URL(`../peers/${name}`, import.meta.url));

/**
 * Run `cardboard import file` once with a fresh journal against `emu` (else a fresh emulator, closed after).
 * Returns wall ms, peak RSS, the --json summary, rows/s over the wall time and over the engine's durationMs.
 */
export async function importOnce(file, rows, extraArgs = [], emu = undefined, nodeArgs = [], run = {}) {
  const own = emu === undefined;
  const target = emu ?? (await startEmulator());
  const config = mkdtempSync(join(tmpdir(), 'cardboard-bench-'));
  const journal = join(OUT, `journal-${process.pid}.jsonl`);
  try {
    const r = await runCli(['import', file, '--json', '--restart', '--journal', journal, ...extraArgs], {
      rss: true,
      nodeArgs,
      node: run.node,
      env: childEnv({ ...target.env, CARDBOARD_CONFIG_DIR: config, ...run.env }),
    });
    const summary = JSON.parse(r.stdout);
    if (!summary.dryRun && summary.created !== rows) throw new Error(`import created ${summary.created} of ${rows} rows: ${r.stdout}`);
    const engine = summary.durationMs ? rows / (summary.durationMs / 1000) : undefined;
    return { ms: r.ms, rssKb: r.rssKb, cpuMs: r.cpuMs, summary, rowsPerSec: rows / (r.ms / 1000), engineRowsPerSec: engine };
  } finally {
    rmSync(config, { recursive: true, force: true });
    rmSync(journal, { force: true });
    if (own) await target.close();
  }
}

/** autocannon's requests/s and its CPU time (it runs in this process, which does nothing else meanwhile). */
async function cannonOnce(rows) {
  const emu = await startEmulator();
  try {
    const cpu = process.cpuUsage();
    const r = await autocannon({
      url: `${emu.url}/api/aptlet/${BOARD}`,
      method: 'POST',
      connections: CONNECTIONS,
      amount: rows,
      headers: { 'content-type': 'application/json', 'x-token': TOKEN },
      body: rowBody(1),
    });
    const used = process.cpuUsage(cpu);
    if (r.non2xx > 0 || r.errors > 0) throw new Error(`autocannon: ${r.non2xx} non-2xx, ${r.errors} errors`);
    return { perSec: r.requests.total / r.duration, cpuMs: (used.user + used.system) / 1000 };
  } finally {
    await emu.close();
  }
}

/** A peer script's rows/s (`rows` must be what it prints) and its CPU time. */
async function loopOnce(cmd, args, rows) {
  const emu = await startEmulator();
  try {
    const r = await runMeasured(cmd, args, { env: childEnv(emu.env), rss: true });
    if (r.code !== 0 || Number(r.stdout.trim()) !== rows) throw new Error(`${args[0]} exited ${r.code} after ${r.stdout.trim()} rows: ${r.stderr.slice(-500)}`);
    return { perSec: rows / (r.ms / 1000), cpuMs: r.cpuMs };
  } finally {
    await emu.close();
  }
}

/** Run the import-speed scenario. */
export async function importSpeed({ quick }) {
  const rows = quick ? 5000 : 20_000;
  const runs = quick ? 1 : 3;
  const fetchRows = quick ? 500 : 3000;
  const curlRows = quick ? 100 : 500;
  const file = csvFile(rows);
  const cb = [];
  const engine = [];
  const ceiling = [];
  const library = [];
  // CPU time per row (µs) of each client: on 2 cores shared with the emulator, this is what limits rows/s.
  const cpu = { cardboard: [], autocannon: [], undici: [] };
  const perRow = (ms) => (ms === undefined ? undefined : (ms * 1000) / rows);
  for (let i = 0; i < runs; i++) {
    log(`import ${rows} rows, run ${i + 1}/${runs}`);
    const r = await importOnce(file, rows, ['--concurrency', String(CONNECTIONS)]);
    cb.push(r.rowsPerSec);
    engine.push(r.engineRowsPerSec);
    cpu.cardboard.push(perRow(r.cpuMs));
    const c = await cannonOnce(rows);
    ceiling.push(c.perSec);
    cpu.autocannon.push(perRow(c.cpuMs));
    const u = await loopOnce(process.execPath, [peer('undici-import.mjs'), file, String(CONNECTIONS)], rows);
    library.push(u.perSec);
    cpu.undici.push(perRow(u.cpuMs));
  }
  log(`docs' fetch loop, ${fetchRows} rows`);
  const fetchLoop = (await loopOnce(process.execPath, [peer('fetch-import.mjs'), file, String(fetchRows)], fetchRows)).perSec;
  log(`curl loop, ${curlRows} rows`);
  const curlLoop = (await loopOnce('bash', [peer('curl-loop.sh'), file, String(curlRows)], curlRows)).perSec;
  const cpuUs = Object.fromEntries(Object.entries(cpu).map(([k, v]) => [k, v.includes(undefined) ? null : sig(median(v))]));
  const cpuText = (k) => (cpuUs[k] === null ? '' : `, ${cpuUs[k]} µs CPU/row`);

  const mine = median(cb);
  const data = {
    rows,
    runs,
    connections: CONNECTIONS,
    cardboardRowsPerSec: sig(mine),
    cardboardEngineRowsPerSec: sig(median(engine)),
    autocannonReqPerSec: sig(median(ceiling)),
    undiciLoopRowsPerSec: sig(median(library)),
    cpuMicrosecondsPerRow: cpuUs,
    fetchLoop: { rows: fetchRows, rowsPerSec: sig(fetchLoop) },
    curlLoop: { rows: curlRows, rowsPerSec: sig(curlLoop) },
    samples: { cardboard: cb.map((v) => sig(v)), engine: engine.map((v) => sig(v)), autocannon: ceiling.map((v) => sig(v)), undiciLoop: library.map((v) => sig(v)) },
  };
  const label = `import ${rows.toLocaleString('en')} rows, unthrottled`;
  const ratio = mine / median(ceiling);
  return {
    data,
    rows: [
      {
        scenario: label,
        cardboard: `${sig(mine)} rows/s (engine ${sig(median(engine))})${cpuText('cardboard')}`,
        beside: `autocannon, ${CONNECTIONS} connections: ${sig(median(ceiling))} req/s${cpuText('autocannon')}`,
        ratio: sig(ratio),
        ratioText: `${sig(ratio)}×`,
        goal: `≥ ${GOAL}×`,
        met: ratio >= GOAL,
      },
      {
        scenario: `${label}, vs its HTTP library alone`,
        cardboard: `${sig(mine)} rows/s`,
        beside: `undici \`request()\`, ${CONNECTIONS} workers, no mapping/journal/pacing: ${sig(median(library))} rows/s${cpuText('undici')}`,
        ratio: sig(mine / median(library)),
        ratioText: `${sig(mine / median(library))}×`,
        goal: 'report',
        met: null,
      },
      {
        scenario: `${label}, vs the docs' loop`,
        cardboard: `${sig(mine)} rows/s`,
        beside: `sequential \`fetch\` loop: ${sig(fetchLoop)} rows/s (${fetchRows.toLocaleString('en')} rows)`,
        ratio: sig(mine / fetchLoop),
        ratioText: `${sig(mine / fetchLoop)}× faster`,
        goal: 'report',
        met: null,
      },
      {
        scenario: `${label}, vs a shell loop`,
        cardboard: `${sig(mine)} rows/s`,
        beside: `\`curl\` loop: ${sig(curlLoop)} rows/s (${curlRows} rows, extrapolated)`,
        ratio: sig(mine / curlLoop),
        ratioText: `${sig(mine / curlLoop)}× faster`,
        goal: 'report',
        met: null,
      },
    ],
  };
}
