// Import under a rate limit: the emulator at 1,200 requests/min with bursts of 20 (the real limit ×10, to keep
// it short) and `cardboard import` left to adapt (no --rate), at --concurrency 1 (the default: one row at a time,
// in file order) and at --concurrency 8, at the same time, each against its own emulator: under the limit the two
// should reach the same share of what it allows. The emulator's own record of the POSTs gives the achieved rate
// and the share answered 429. With --against, the ref's import runs at the same time too, at both concurrencies,
// against emulators of its own with the same limit: the figures are set by the limit, not by the CPU (20 rows/s
// leave the cores nearly idle), so running them all at once keeps the scenario at ~2 minutes instead of ~8.
import { csvFile } from '../lib/csv.mjs';
import { BOARD, startEmulator } from '../lib/emulator.mjs';
import { log, NotInRef } from '../lib/proc.mjs';
import { notIn, num, sig } from '../lib/stats.mjs';
import { importOnce } from './import-speed.mjs';

const PER_MINUTE = 1200;
const BURST = 20;
const GOAL_SHARE = 0.95;
const GOAL_429 = 0.02;
/** The default (rows in file order) and the throughput setting. */
const CONCURRENCIES = [1, 8];

/** One client's import at `concurrency` under the limit, on a fresh emulator; its figures, or { missing } when the ref lacks a flag. */
async function limitedOnce(file, rows, client, concurrency, signal) {
  const emu = await startEmulator({ rateLimit: `${PER_MINUTE}/min`, burst: BURST });
  let run;
  let posts;
  try {
    run = await importOnce(file, rows, ['--concurrency', String(concurrency)], emu, [], { client, signal });
    posts = (await emu.requests()).filter((r) => r.method === 'POST' && r.path === `/api/aptlet/${BOARD}`);
  } catch (err) {
    if (err instanceof NotInRef) return { missing: true };
    throw err;
  } finally {
    await emu.close();
  }
  const ok = posts.filter((r) => r.status >= 200 && r.status < 300).length;
  const limited = posts.filter((r) => r.status === 429).length;
  const spanS = (posts.at(-1).time - posts[0].time) / 1000;
  // The most a client could have had accepted between its first and last POST: a full bucket, then the refill.
  const allowed = BURST + (PER_MINUTE / 60) * spanS;
  return { stopped: run.stopped === true, posts: posts.length, accepted: ok, answered429: limited, share429: limited / posts.length, spanSeconds: spanS, achievedPerSecond: ok / spanS, allowedInSpan: allowed, shareOfAllowed: ok / allowed, wallSeconds: run.ms / 1000 };
}

const rounded = (f) => Object.fromEntries(Object.entries(f).map(([k, v]) => [k, typeof v === 'number' ? sig(v) : v]));
const text = (f) => `${num(f.achievedPerSecond)} rows/s; ${num(f.share429 * 100)} % of POSTs answered 429 (${f.answered429}/${f.posts})`;

/** Run the rate-limited import scenario, every client at once. */
export async function importLimit({ quick, clients, ref }) {
  const rows = quick ? 400 : 2500;
  const file = csvFile(rows);
  const runs = CONCURRENCIES.flatMap((concurrency) => clients.map((client) => ({ client, concurrency })));
  log(`import ${rows} rows under ${PER_MINUTE}/min, burst ${BURST} (about ${Math.round(rows / (PER_MINUTE / 60))} s): ${runs.map((r) => `${r.client.label} --concurrency ${r.concurrency}`).join(', ')} at once, each on its own emulator`);
  // A ref far slower than ours is stopped once ours have been done for half as long again as they took (the
  // scenario must stay near 2 minutes), and reported with its figures up to then.
  const stopRef = new AbortController();
  let timer;
  const ours = runs.filter((r) => r.client === clients[0]);
  const mineDone = Promise.all(ours.map((r) => limitedOnce(file, rows, r.client, r.concurrency))).then(
    (rs) => {
      timer = setTimeout(() => stopRef.abort(), Math.max((Math.max(...rs.map((r) => r.wallSeconds)) * 1000) / 2, 10_000));
      return rs;
    },
    (err) => {
      stopRef.abort();
      throw err;
    },
  );
  const others = runs.filter((r) => r.client !== clients[0]);
  const [mine, theirs] = await Promise.all([mineDone, Promise.all(others.map((r) => limitedOnce(file, rows, r.client, r.concurrency, stopRef.signal)))]);
  clearTimeout(timer);
  const refAt = (c) => (ref ? theirs[others.findIndex((r) => r.client === ref && r.concurrency === c)] : undefined);
  const perSecond = PER_MINUTE / 60;
  const out = CONCURRENCIES.map((c, i) => {
    const m = mine[i];
    const t = refAt(c);
    const row = {
      scenario: `import ${rows.toLocaleString('en')} rows under ${PER_MINUTE.toLocaleString('en')}/min, burst ${BURST}, --concurrency ${c}${c === 1 ? ' (the default, file order)' : ''}`,
      cardboard: `${text(m)}; ${num(m.wallSeconds)} s`,
      beside: `allowed: ${perSecond}/s + burst ${BURST} = ${num(m.allowedInSpan)} rows in ${num(m.spanSeconds)} s`,
      ratio: sig(m.shareOfAllowed),
      ratioText: `${num(m.shareOfAllowed)} of allowed`,
      goal: `≥ ${GOAL_SHARE} of allowed, ≤ ${GOAL_429 * 100} % 429s`,
      met: m.shareOfAllowed >= GOAL_SHARE && m.share429 <= GOAL_429,
    };
    if (t?.missing) row.ref = row.vsRef = notIn(ref.short);
    else if (t) {
      row.ref = `${ref.short}: ${text(t)}, ${num(t.shareOfAllowed)} of allowed${t.stopped ? ` (stopped after ${num(t.wallSeconds)} s, unfinished)` : ''}`;
      row.vsRef = `${num(m.shareOfAllowed / t.shareOfAllowed)}× the share of allowed`;
    }
    return row;
  });
  const byConcurrency = Object.fromEntries(
    CONCURRENCIES.map((c, i) => {
      const t = refAt(c);
      return [c, { ...rounded(mine[i]), ref: t && { label: ref.label, ...(t.missing ? { missing: true } : rounded(t)) } }];
    }),
  );
  return {
    data: { rows, limit: { perMinute: PER_MINUTE, burst: BURST }, byConcurrency },
    rows: out,
    note: ref ? 'import-limit: the ref at the same time as ours, at both concurrencies, each against its own emulator (the limit sets the figures, not the CPU), stopped if still running once ours have been done for half as long again as they took.' : undefined,
  };
}
