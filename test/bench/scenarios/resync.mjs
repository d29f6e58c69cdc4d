// Re-sync: a 10,000-row export pushed again with 1 % of its rows changed (at the default --concurrency 1, named on
// the command line), against the emulator at
// the service's documented limit (120/min, bursts of 20), with `--match-on Name`: the board is read once and only
// the changed rows are sent. Beside it, re-posting every row (what cardboard did before): at 2 requests/s that
// takes ~85 minutes, so it is not run in full; a bounded run of it measures the POST rate the limit allows, and
// its time for all rows is extrapolated from that rate (said so in the table). With --against, the ref's re-sync
// runs at the same time as ours against its own emulator with the same limit: the limit sets the figures, not
// the CPU (2 requests/s), so the scenario stays at ~3 minutes instead of ~6; the re-post sample runs alongside too.
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BOARD, startEmulator } from '../lib/emulator.mjs';
import { childEnv, log, NotInRef, OUT, runCli } from '../lib/proc.mjs';
import { notIn, num, sig } from '../lib/stats.mjs';

const PER_MINUTE = 120;
const BURST = 20;
const PAGE_SIZE = 50;
const GOAL_SPEEDUP = 20;
const GOAL_OVERHEAD = 0.05;

// The emulator's --seed-cards values (src/emulator/server.ts): card i is "Demo card i".
const STATUS = ['To do', 'Doing', 'Done'];
const OWNER = ['Ada', 'Grace', 'Linus', 'Margaret'];
const PRIORITY = ['High', 'Medium', 'Low'];

/** The seeded board as a CSV, with every `every`-th row's Status moved on: those rows are the changes. */
function exportFile(rows, every) {
  mkdirSync(OUT, { recursive: true });
  const path = join(OUT, `resync-${rows}-${every}.csv`);
  const fd = openSync(path, 'w');
  let text = 'Name,Status,Owner,Priority\n';
  let changed = 0;
  for (let i = 1; i <= rows; i++) {
    let status = STATUS[(i - 1) % 3];
    if (every > 0 && i % every === 0) {
      status = STATUS[i % 3];
      changed++;
    }
    text += `Demo card ${i},${status},${OWNER[(i - 1) % 4]},${PRIORITY[(i - 1) % 3]}\n`;
  }
  writeSync(fd, text);
  closeSync(fd);
  return { path, changed };
}

async function run(emu, args, client, signal) {
  const config = mkdtempSync(join(tmpdir(), 'cardboard-bench-'));
  try {
    const r = await runCli(['import', ...args, '--json', '--restart', '--journal', join(config, 'journal')], {
      client,
      signal,
      env: childEnv({ ...emu.env, CARDBOARD_CONFIG_DIR: config }),
    });
    return { ms: r.ms, stopped: r.stopped, summary: r.stopped ? undefined : JSON.parse(r.stdout) };
  } finally {
    rmSync(config, { recursive: true, force: true });
  }
}

/** One client's re-sync on a fresh seeded emulator: wall time, summary, GETs and POSTs; { missing } if the ref lacks it. */
async function syncOnce(rows, path, limit, client, signal) {
  const emu = await startEmulator({ ...limit, seedCards: rows });
  try {
    const sync = await run(emu, [path, '--match-on', 'Name', '--concurrency', '1'], client, signal);
    const reqs = (await emu.requests()).filter((r) => r.path.startsWith(`/api/aptlet/${BOARD}`));
    return { ...sync, gets: reqs.filter((r) => r.method === 'GET').length, posts: reqs.filter((r) => r.method === 'POST').length };
  } catch (err) {
    if (err instanceof NotInRef) return { missing: true };
    throw err;
  } finally {
    await emu.close();
  }
}

/** Run the re-sync scenario (every client at once). */
export async function resync({ quick, clients, ref }) {
  const rows = quick ? 2000 : 10_000;
  const { path, changed } = exportFile(rows, 100);
  const limit = { rateLimit: `${PER_MINUTE}/min`, burst: BURST, pageSize: PAGE_SIZE, updateMode: 'Update if exists' };

  log(`re-sync of ${rows} rows, ${changed} changed, under ${PER_MINUTE}/min burst ${BURST}${clients.length > 1 ? `: ${clients.map((c) => c.label).join(' and ')} at once, each on its own emulator` : ''}`);
  // Re-posting every row: a bounded plain import on a fresh board measures the accepted POST rate. It runs at
  // the same time as the re-syncs, on its own emulator (the limit, not the CPU, sets every figure here).
  const sample = quick ? 60 : 120;
  const repostRate = async () => {
    const { path: samplePath } = exportFile(sample, 0);
    const emu2 = await startEmulator(limit);
    try {
      log(`re-posting: ${sample} rows at the same limit, to measure the POST rate`);
      await run(emu2, [samplePath, '--concurrency', '1'], clients[0]);
      const ok = (await emu2.requests()).filter((r) => r.method === 'POST' && r.status < 300);
      // Past the burst, the rate the limit allows: accepted POSTs after the first BURST, over their span.
      const steady = ok.slice(BURST);
      return (steady.length - 1) / ((steady.at(-1).time - steady[0].time) / 1000);
    } finally {
      await emu2.close();
    }
  };
  // A ref that sends every row again (before --match-on read the board) would take ~85 minutes: it is stopped
  // once ours has been done for half as long again as it took, and reported as stopped with its requests so far.
  const stopRef = new AbortController();
  let timer;
  const mineDone = syncOnce(rows, path, limit, clients[0]).then(
    (r) => {
      timer = setTimeout(() => stopRef.abort(), Math.max((r.ms ?? 0) / 2, 10_000));
      return r;
    },
    (err) => {
      stopRef.abort();
      throw err;
    },
  );
  const [rate, ...syncs] = await Promise.all([repostRate(), mineDone, ...clients.slice(1).map((c) => syncOnce(rows, path, limit, c, stopRef.signal))]);
  clearTimeout(timer);
  const sync = syncs[0];
  const theirs = ref ? syncs[clients.indexOf(ref)] : undefined;
  const { gets, posts } = sync;
  const pages = Math.floor(rows / PAGE_SIZE) + 1; // the last, empty page ends the read (spec 4.5)
  const budget = (pages + changed) * (1 + GOAL_OVERHEAD);

  // All rows re-posted: the board read (as the re-sync did it) plus every row at the measured rate.
  const repostMs = (gets / rate + (rows - BURST) / rate) * 1000;
  const speedup = repostMs / sync.ms;
  const s = sync.summary;
  const data = {
    rows,
    changed,
    limit: { perMinute: PER_MINUTE, burst: BURST, pageSize: PAGE_SIZE },
    summary: { updated: s.updated, unchanged: s.unchanged, created: s.created, rejected: s.rejected, uncertain: s.uncertain },
    gets,
    posts,
    pages,
    requests: gets + posts,
    requestBudget: Math.floor(budget),
    wallSeconds: sig(sync.ms / 1000),
    repost: { sampleRows: sample, postsPerSecond: sig(rate), extrapolatedSeconds: sig(repostMs / 1000) },
    speedup: sig(speedup),
    ref: theirs && { label: ref.label, ...(theirs.missing ? { missing: true } : { gets: theirs.gets, posts: theirs.posts, wallSeconds: sig(theirs.ms / 1000), stopped: theirs.stopped, summary: theirs.summary && { updated: theirs.summary.updated, unchanged: theirs.summary.unchanged, created: theirs.summary.created } }) },
  };
  const refCells = {};
  if (theirs?.missing) refCells.ref = refCells.vsRef = notIn(ref.short);
  else if (theirs?.stopped) {
    refCells.ref = `${ref.short}: not done after ${num(theirs.ms / 1000)} s (stopped): ${theirs.gets + theirs.posts} requests so far (${theirs.gets} GETs + ${theirs.posts} POSTs)`;
    refCells.vsRef = `≤ ${num((gets + posts) / (theirs.gets + theirs.posts))}× the requests`;
  } else if (theirs) {
    refCells.ref = `${ref.short}: ${theirs.gets + theirs.posts} requests (${theirs.gets} GETs + ${theirs.posts} POSTs) in ${num(theirs.ms / 1000)} s; ${theirs.summary.updated} updated, ${theirs.summary.unchanged} unchanged`;
    refCells.vsRef = `${num((gets + posts) / (theirs.gets + theirs.posts))}× the requests, ${num(sync.ms / theirs.ms)}× the time`;
  }
  return {
    note: ref ? 'resync: the ref at the same time as ours, each against its own emulator (the limit sets the figures, not the CPU), stopped if still running once ours has been done for half as long again as it took; the re-post estimate is ours only.' : undefined,
    data,
    rows: [
      {
        ...refCells,
        scenario: `re-sync ${rows.toLocaleString('en')} rows, ${changed} changed, --match-on, --concurrency 1, ${PER_MINUTE}/min burst ${BURST}`,
        cardboard: `${gets + posts} requests (${gets} GETs for ${pages} pages + ${posts} POSTs) in ${sig(sync.ms / 1000)} s; ${s.updated} updated, ${s.unchanged} unchanged`,
        beside: `re-posting every row: ${rows + gets} requests, ≈ ${sig(repostMs / 60_000)} min (extrapolated from ${sample} rows at ${sig(rate)} POST/s)`,
        ratio: sig(speedup),
        ratioText: `${sig(speedup)}× faster`,
        goal: `requests ≤ pages + changed + 5 % (${Math.floor(budget)}); ≥ ${GOAL_SPEEDUP}× faster`,
        met: gets + posts <= budget && speedup >= GOAL_SPEEDUP && s.updated === changed && s.unchanged === rows - changed,
      },
    ],
  };
}
