// Re-sync from the mirror: 1,000 seeded cards exported with 1 % of the rows changed, pushed again with
// `--match-on Name --mirror` (the key index from a mirror pulled just before: no page request), beside today's
// `--match-on Name` (every page read first), each against its own emulator at the service's documented limit
// (120/min, bursts of 20) at the same time: the limit sets the figures, not the CPU. The mirror is filled
// through the store (dist/mirror), as a complete pull of the board's state that ended now; the requests
// counted are the emulator's own record of the API (the schema, the pages, card reads and the POSTs).
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BOARD, startEmulator } from '../lib/emulator.mjs';
import { fillMirror } from '../lib/mirror.mjs';
import { childEnv, log, OUT, runCli } from '../lib/proc.mjs';
import { sig } from '../lib/stats.mjs';

const PER_MINUTE = 120;
const BURST = 20;
const PAGE_SIZE = 50;
const ROWS = 1000;
const EVERY = 100;
/** The goal: the changed rows plus the schema request (the physical minimum is the changed rows alone). */
const GOAL_REQUESTS = ROWS / EVERY + 1;

// The emulator's --seed-cards values (src/emulator/server.ts): card i is "Demo card i".
const STATUS = ['To do', 'Doing', 'Done'];
const OWNER = ['Ada', 'Grace', 'Linus', 'Margaret'];
const PRIORITY = ['High', 'Medium', 'Low'];

/** The seeded board as a CSV, with every EVERY-th row's Status moved on: those rows are the changes. */
function exportFile() {
  mkdirSync(OUT, { recursive: true });
  const path = join(OUT, `resync-mirror-${ROWS}.csv`);
  const fd = openSync(path, 'w');
  let text = 'Name,Status,Owner,Priority\n';
  for (let i = 1; i <= ROWS; i++) {
    const status = i % EVERY === 0 ? STATUS[i % 3] : STATUS[(i - 1) % 3];
    text += `Demo card ${i},${status},${OWNER[(i - 1) % 4]},${PRIORITY[(i - 1) % 3]}\n`;
  }
  writeSync(fd, text);
  closeSync(fd);
  return path;
}

/** One re-sync on a fresh seeded emulator (with `mirror`: from a mirror filled just before): time, summary, requests. */
async function syncOnce(path, mirror) {
  const emu = await startEmulator({ rateLimit: `${PER_MINUTE}/min`, burst: BURST, pageSize: PAGE_SIZE, seedCards: ROWS, updateMode: 'Update if exists' });
  const dir = mkdtempSync(join(tmpdir(), 'cardboard-bench-'));
  try {
    const env = { ...emu.env, CARDBOARD_CONFIG_DIR: dir };
    if (mirror) {
      env.CARDBOARD_MIRROR = join(dir, 'mirror.db');
      await fillMirror({ CARDBOARD_MIRROR: env.CARDBOARD_MIRROR }, emu.url, (await emu.state())[BOARD].cards, { pageSize: PAGE_SIZE });
    }
    const args = ['import', path, '--match-on', 'Name', ...(mirror ? ['--mirror'] : []), '--concurrency', '1', '--json', '--restart', '--journal', join(dir, 'journal')];
    const r = await runCli(args, { env: childEnv(env) });
    const reqs = (await emu.requests()).filter((q) => q.path.startsWith(`/api/aptlet/${BOARD}`));
    const pages = reqs.filter((q) => q.method === 'GET' && /^\/api\/aptlet\/[^/?]+(\?|$)/.test(q.path)).length;
    const gets = reqs.filter((q) => q.method === 'GET').length;
    return { ms: r.ms, summary: JSON.parse(r.stdout), gets, pages, posts: reqs.filter((q) => q.method === 'POST').length, requests: reqs.length };
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await emu.close();
  }
}

/** Run the scenario: both re-syncs at once, each on its own emulator. */
export async function resyncMirror() {
  const path = exportFile();
  const changed = ROWS / EVERY;
  log(`re-sync of ${ROWS} rows, ${changed} changed, under ${PER_MINUTE}/min burst ${BURST}: --mirror (fresh) and the pages, at once`);
  const [mirror, pages] = await Promise.all([syncOnce(path, true), syncOnce(path, false)]);
  const text = (r) => `${r.requests} requests (${r.gets} GETs, of them ${r.pages} pages, + ${r.posts} POSTs) in ${sig(r.ms / 1000)} s; ${r.summary.updated} updated, ${r.summary.unchanged} unchanged`;
  const data = {
    rows: ROWS,
    changed,
    limit: { perMinute: PER_MINUTE, burst: BURST, pageSize: PAGE_SIZE },
    mirror: { requests: mirror.requests, gets: mirror.gets, pages: mirror.pages, posts: mirror.posts, wallSeconds: sig(mirror.ms / 1000), index: mirror.summary.index },
    pages: { requests: pages.requests, gets: pages.gets, pages: pages.pages, posts: pages.posts, wallSeconds: sig(pages.ms / 1000) },
  };
  const ok = (r) => r.summary.updated === changed && r.summary.unchanged === ROWS - changed && r.summary.created === 0;
  return {
    data,
    rows: [
      {
        scenario: `re-sync ${ROWS.toLocaleString('en')} rows, ${changed} changed, --match-on --mirror (fresh), --concurrency 1, ${PER_MINUTE}/min burst ${BURST}`,
        cardboard: text(mirror),
        beside: `--match-on reading the pages: ${text(pages)}`,
        ratio: sig(pages.requests / mirror.requests),
        ratioText: `${sig(pages.requests / mirror.requests)}× fewer requests, ${sig(pages.ms / mirror.ms)}× faster`,
        goal: `requests ≤ ${GOAL_REQUESTS} (changed rows + the schema); no page request`,
        met: mirror.requests <= GOAL_REQUESTS && mirror.pages === 0 && ok(mirror) && ok(pages),
      },
    ],
  };
}
