// Import under a rate limit: the emulator at 1,200 requests/min with bursts of 20 (the real limit ×10, to keep
// it short) and `cardboard import` left to adapt (no --rate). The emulator's own record of the POSTs gives the
// achieved rate and the share answered 429. With --against, the ref's import runs at the same time against its
// own emulator with the same limit: the figures are set by the limit, not by the CPU (20 rows/s leave the cores
// nearly idle), so running both at once keeps the scenario at ~2 minutes instead of ~4.
import { csvFile } from '../lib/csv.mjs';
import { BOARD, startEmulator } from '../lib/emulator.mjs';
import { log, NotInRef } from '../lib/proc.mjs';
import { notIn, num, sig } from '../lib/stats.mjs';
import { importOnce } from './import-speed.mjs';

const PER_MINUTE = 1200;
const BURST = 20;
const GOAL_SHARE = 0.95;
const GOAL_429 = 0.02;

/** One client's import under the limit, on a fresh emulator; its figures, or { missing } when the ref lacks a flag. */
async function limitedOnce(file, rows, client, signal) {
  const emu = await startEmulator({ rateLimit: `${PER_MINUTE}/min`, burst: BURST });
  let run;
  let posts;
  try {
    run = await importOnce(file, rows, [], emu, [], { client, signal });
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
  log(`import ${rows} rows under ${PER_MINUTE}/min, burst ${BURST} (about ${Math.round(rows / (PER_MINUTE / 60))} s)${clients.length > 1 ? `: ${clients.map((c) => c.label).join(' and ')} at once, each on its own emulator` : ''}`);
  // A ref far slower than ours is stopped once ours has been done for half as long again as it took (the scenario
  // must stay near 2 minutes), and reported with its figures up to then.
  const stopRef = new AbortController();
  let timer;
  const mineDone = limitedOnce(file, rows, clients[0]).then(
    (r) => {
      timer = setTimeout(() => stopRef.abort(), Math.max((r.wallSeconds * 1000) / 2, 10_000));
      return r;
    },
    (err) => {
      stopRef.abort();
      throw err;
    },
  );
  const results = await Promise.all([mineDone, ...clients.slice(1).map((c) => limitedOnce(file, rows, c, stopRef.signal))]);
  clearTimeout(timer);
  const mine = results[0];
  const theirs = ref ? results[clients.indexOf(ref)] : undefined;
  const perSecond = PER_MINUTE / 60;
  const row = {
    scenario: `import ${rows.toLocaleString('en')} rows under ${PER_MINUTE.toLocaleString('en')}/min, burst ${BURST}`,
    cardboard: text(mine),
    beside: `allowed: ${perSecond}/s + burst ${BURST} = ${num(mine.allowedInSpan)} rows in ${num(mine.spanSeconds)} s`,
    ratio: sig(mine.shareOfAllowed),
    ratioText: `${num(mine.shareOfAllowed)} of allowed`,
    goal: `≥ ${GOAL_SHARE} of allowed, ≤ ${GOAL_429 * 100} % 429s`,
    met: mine.shareOfAllowed >= GOAL_SHARE && mine.share429 <= GOAL_429,
  };
  if (theirs?.missing) row.ref = row.vsRef = notIn(ref.short);
  else if (theirs) {
    row.ref = `${ref.short}: ${text(theirs)}, ${num(theirs.shareOfAllowed)} of allowed${theirs.stopped ? ` (stopped after ${num(theirs.wallSeconds)} s, unfinished)` : ''}`;
    row.vsRef = `${num(mine.shareOfAllowed / theirs.shareOfAllowed)}× the share of allowed`;
  }
  return {
    data: { rows, limit: { perMinute: PER_MINUTE, burst: BURST }, ...rounded(mine), ref: theirs && { label: ref.label, ...(theirs.missing ? { missing: true } : rounded(theirs)) } },
    rows: [row],
    note: ref ? 'import-limit: the ref at the same time as ours, each against its own emulator (the limit sets the figures, not the CPU), stopped if still running once ours has been done for half as long again as it took.' : undefined,
  };
}
