// Import under a rate limit: the emulator at 1,200 requests/min with bursts of 20 (the real limit ×10, to keep
// it short) and `cardboard import` left to adapt (no --rate). The emulator's own record of the POSTs gives the
// achieved rate and the share answered 429.
import { csvFile } from '../lib/csv.mjs';
import { BOARD, startEmulator } from '../lib/emulator.mjs';
import { log, sig } from '../lib/proc.mjs';
import { importOnce } from './import-speed.mjs';

const PER_MINUTE = 1200;
const BURST = 20;
const GOAL_SHARE = 0.95;
const GOAL_429 = 0.02;

/** Run the rate-limited import scenario. */
export async function importLimit({ quick }) {
  const rows = quick ? 400 : 2500;
  const file = csvFile(rows);
  const emu = await startEmulator({ rateLimit: `${PER_MINUTE}/min`, burst: BURST });
  let run;
  let posts;
  try {
    log(`import ${rows} rows under ${PER_MINUTE}/min, burst ${BURST} (about ${Math.round(rows / (PER_MINUTE / 60))} s)`);
    run = await importOnce(file, rows, [], emu);
    posts = (await emu.requests()).filter((r) => r.method === 'POST' && r.path === `/api/aptlet/${BOARD}`);
  } finally {
    await emu.close();
  }
  const ok = posts.filter((r) => r.status >= 200 && r.status < 300).length;
  const limited = posts.filter((r) => r.status === 429).length;
  const spanS = (posts.at(-1).time - posts[0].time) / 1000;
  const perSecond = PER_MINUTE / 60;
  // The most a client could have had accepted between its first and last POST: a full bucket, then the refill.
  const allowed = BURST + perSecond * spanS;
  const share = ok / allowed;
  const share429 = limited / posts.length;
  const data = {
    rows,
    limit: { perMinute: PER_MINUTE, burst: BURST },
    posts: posts.length,
    accepted: ok,
    answered429: limited,
    share429: sig(share429),
    spanSeconds: sig(spanS),
    achievedPerSecond: sig(ok / spanS),
    allowedInSpan: sig(allowed),
    shareOfAllowed: sig(share),
    wallSeconds: sig(run.ms / 1000),
  };
  return {
    data,
    rows: [
      {
        scenario: `import ${rows.toLocaleString('en')} rows under ${PER_MINUTE.toLocaleString('en')}/min, burst ${BURST}`,
        cardboard: `${sig(ok / spanS)} rows/s; ${sig(share429 * 100, 2)} % of POSTs answered 429 (${limited}/${posts.length})`,
        beside: `allowed: ${perSecond}/s + burst ${BURST} = ${sig(allowed)} rows in ${sig(spanS)} s`,
        ratio: sig(share),
        ratioText: `${sig(share)} of allowed`,
        goal: `≥ ${GOAL_SHARE} of allowed, ≤ ${GOAL_429 * 100} % 429s`,
        met: share >= GOAL_SHARE && share429 <= GOAL_429,
      },
    ],
  };
}
