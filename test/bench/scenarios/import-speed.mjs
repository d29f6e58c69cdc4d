// Import throughput against the unthrottled emulator, at --concurrency 8 and 16 (8 and 16 connections; the default,
// 1, sends one row at a time to keep the file's order, and is measured where it matters, under the service's
// limit, by import-limit): `cardboard import` (and the
// ref's, with --against) beside undici `request()` alone posting the same rows over the same connections (the
// library's floor) and autocannon posting one pre-built body (the load generator's ceiling). Every client gets
// a fresh emulator child, so no run inherits another's cards; the clients take turns in rounds whose order
// alternates (A B C D, D C B A, …). Figures: rows/s over the wall time, and CPU µs per row (user + system of
// the child, from GNU time; autocannon's from process.cpuUsage, since it runs in this process). The docs'
// sequential `fetch` loop and a shell `curl` loop run once each, at the end.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { csvFile, rowBody } from '../lib/csv.mjs';
import { BOARD, startEmulator, TOKEN } from '../lib/emulator.mjs';
import { childEnv, log, NotInRef, OUT, runCli, runMeasured } from '../lib/proc.mjs';
import { abbaOrder, figure, median, notIn, num, pairedRatio, ratioText, sig } from '../lib/stats.mjs';

const CONCURRENCIES = [8, 16];
const GOAL = 0.9;
let journals = 0;
const peer = (name) => fileURLToPath(new URL(`../peers/${name}`, import.meta.url));

/**
 * Run `import file` once with a fresh journal against `emu` (else a fresh emulator, closed after).
 * Returns wall ms, peak RSS, CPU ms, the --json summary, rows/s over the wall time and over the engine's durationMs.
 * run: { node, env, client, signal } (client: whose CLI, this tree's by default; signal: stops the import, and the
 * result is then { stopped: true, ms }).
 */
export async function importOnce(file, rows, extraArgs = [], emu = undefined, nodeArgs = [], run = {}) {
  const own = emu === undefined;
  const target = emu ?? (await startEmulator());
  const config = mkdtempSync(join(tmpdir(), 'cardboard-bench-'));
  // Its own journal per call: the rate-limited scenarios run two imports at once.
  const journal = join(OUT, `journal-${process.pid}-${++journals}.jsonl`);
  try {
    const r = await runCli(['import', file, '--json', '--restart', '--journal', journal, ...extraArgs], {
      rss: true,
      nodeArgs,
      node: run.node,
      client: run.client,
      signal: run.signal,
      env: childEnv({ ...target.env, CARDBOARD_CONFIG_DIR: config, ...run.env }),
    });
    if (r.stopped) return { stopped: true, ms: r.ms };
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
async function cannonOnce(rows, connections) {
  const emu = await startEmulator();
  try {
    const cpu = process.cpuUsage();
    const r = await autocannon({
      url: `${emu.url}/api/aptlet/${BOARD}`,
      method: 'POST',
      connections,
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

/** Rows/s and CPU µs/row of one contestant at `connections`; `missing` when the ref lacks a flag used. */
async function measure(who, file, rows, connections) {
  const perRow = (ms) => (ms === undefined ? undefined : (ms * 1000) / rows);
  if (who.kind === 'cli') {
    try {
      const r = await importOnce(file, rows, ['--concurrency', String(connections)], undefined, [], { client: who.client });
      return { perSec: r.rowsPerSec, cpuUs: perRow(r.cpuMs), engine: r.engineRowsPerSec };
    } catch (err) {
      if (err instanceof NotInRef) return { missing: true };
      throw err;
    }
  }
  if (who.kind === 'autocannon') {
    const c = await cannonOnce(rows, connections);
    return { perSec: c.perSec, cpuUs: perRow(c.cpuMs) };
  }
  const u = await loopOnce(process.execPath, [peer('undici-import.mjs'), file, String(connections)], rows);
  return { perSec: u.perSec, cpuUs: perRow(u.cpuMs) };
}

/** "4,360 rows/s (4,170–4,830), 261 µs CPU/row (250–270)" over the rounds' samples. */
function describe(samples) {
  const cpu = samples.map((s) => s.cpuUs).filter((v) => v !== undefined);
  return `${figure(samples.map((s) => s.perSec), 'rows/s')}${cpu.length === samples.length ? `, ${figure(cpu, 'µs CPU/row')}` : ''}`;
}

/** Run the import-speed scenario for `clients` (this tree's CLI, and the ref's with --against). */
export async function importSpeed({ quick, clients, ref }) {
  const rows = quick ? 5000 : 20_000;
  const rounds = quick ? 1 : 6;
  const fetchRows = quick ? 500 : 3000;
  const curlRows = quick ? 100 : 500;
  const file = csvFile(rows);
  const contestants = [...clients.map((c) => ({ name: c.label, kind: 'cli', client: c })), { name: 'undici', kind: 'undici' }, { name: 'autocannon', kind: 'autocannon' }];
  const samples = {};
  for (const connections of CONCURRENCIES) {
    samples[connections] = Object.fromEntries(contestants.map((c) => [c.name, []]));
    for (let round = 0; round < rounds; round++) {
      const order = abbaOrder(contestants, round);
      log(`import ${rows} rows, ${connections} connections, round ${round + 1}/${rounds}: ${order.map((c) => c.name).join(', ')}`);
      for (const who of order) samples[connections][who.name].push(await measure(who, file, rows, connections));
    }
  }
  log(`docs' fetch loop, ${fetchRows} rows`);
  const fetchLoop = (await loopOnce(process.execPath, [peer('fetch-import.mjs'), file, String(fetchRows)], fetchRows)).perSec;
  log(`curl loop, ${curlRows} rows`);
  const curlLoop = (await loopOnce('bash', [peer('curl-loop.sh'), file, String(curlRows)], curlRows)).perSec;

  const label = (c) => `import ${rows.toLocaleString('en')} rows, unthrottled, --concurrency ${c}`;
  const out = [];
  const data = { rows, rounds, concurrencies: CONCURRENCIES, fetchLoop: { rows: fetchRows, rowsPerSec: sig(fetchLoop) }, curlLoop: { rows: curlRows, rowsPerSec: sig(curlLoop) }, byConnections: {} };
  for (const c of CONCURRENCIES) {
    const s = samples[c];
    const mine = s.cardboard;
    const rate = (xs) => xs.map((x) => x.perSec);
    const cpu = (xs) => xs.map((x) => x.cpuUs);
    const vsUndici = pairedRatio(rate(mine), rate(s.undici));
    const vsCannon = pairedRatio(rate(mine), rate(s.autocannon));
    const refSamples = ref ? s[ref.label] : undefined;
    const refMissing = refSamples?.some((x) => x.missing);
    let vsRef;
    let refText;
    let vsRefText;
    if (ref && refMissing) refText = vsRefText = notIn(ref.short);
    else if (ref) {
      vsRef = pairedRatio(rate(mine), rate(refSamples));
      const cpuRef = cpu(mine).includes(undefined) || cpu(refSamples).includes(undefined) ? undefined : pairedRatio(cpu(mine), cpu(refSamples));
      refText = `${ref.short}: ${describe(refSamples)}`;
      vsRefText = `${ratioText(vsRef)} rows/s${cpuRef ? `; ${ratioText(cpuRef)} CPU/row` : ''}`;
    }
    const summarize = (xs) => (xs.some((x) => x.missing) ? 'not in ref' : { rowsPerSec: sig(median(rate(xs))), cpuUsPerRow: xs.every((x) => x.cpuUs !== undefined) ? sig(median(cpu(xs))) : null, samples: xs.map((x) => ({ rowsPerSec: sig(x.perSec), cpuUsPerRow: x.cpuUs === undefined ? null : sig(x.cpuUs), engineRowsPerSec: x.engine === undefined ? undefined : sig(x.engine) })) });
    data.byConnections[c] = Object.fromEntries(Object.entries(s).map(([k, xs]) => [k, summarize(xs)]));
    const refGoal = ref && !refMissing ? `, ≥ 1× ${ref.short}` : '';
    out.push({
      scenario: `${label(c)}, vs its HTTP library alone`,
      cardboard: describe(mine),
      beside: `undici \`request()\` alone, ${c} workers, no mapping/journal/pacing: ${describe(s.undici)}`,
      ratio: sig(vsUndici.median),
      ratioText: ratioText(vsUndici),
      goal: `≥ ${GOAL}×${refGoal}`,
      met: vsUndici.median >= GOAL && (vsRef === undefined || vsRef.median >= 1),
      ref: refText,
      vsRef: vsRefText,
    });
    out.push({
      scenario: `${label(c)}, vs a load generator`,
      cardboard: `${num(median(rate(mine)))} rows/s`,
      beside: `autocannon, one pre-built body: ${describe(s.autocannon).replace('rows/s', 'req/s')}`,
      ratio: sig(vsCannon.median),
      ratioText: ratioText(vsCannon),
      goal: 'report',
      met: null,
      ref: ref && !refMissing ? `${ref.short}: ${ratioText(pairedRatio(rate(refSamples), rate(s.autocannon)))} autocannon` : refText,
      vsRef: undefined,
    });
  }
  const mine8 = median(samples[CONCURRENCIES[0]].cardboard.map((x) => x.perSec));
  out.push({
    scenario: `${label(CONCURRENCIES[0])}, vs the docs' loop`,
    cardboard: `${num(mine8)} rows/s`,
    beside: `sequential \`fetch\` loop: ${num(fetchLoop)} rows/s (${fetchRows.toLocaleString('en')} rows, once)`,
    ratio: sig(mine8 / fetchLoop),
    ratioText: `${num(mine8 / fetchLoop)}× faster`,
    goal: 'report',
    met: null,
  });
  out.push({
    scenario: `${label(CONCURRENCIES[0])}, vs a shell loop`,
    cardboard: `${num(mine8)} rows/s`,
    beside: `\`curl\` loop: ${num(curlLoop)} rows/s (${curlRows} rows, once, extrapolated)`,
    ratio: sig(mine8 / curlLoop),
    ratioText: `${num(mine8 / curlLoop)}× faster`,
    goal: 'report',
    met: null,
  });
  return { data, rows: out, note: ref ? 'import-speed: the ref at --concurrency 8 and 16, in every round.' : undefined };
}
