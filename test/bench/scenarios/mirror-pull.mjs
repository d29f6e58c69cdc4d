// `cardboard mirror pull` (into a fresh mirror each time) beside `card list --all --format ndjson >/dev/null`
// under the same rate limit: both read every page at the client's rate, so the pull's writes to SQLite, its
// schema request and its reconcile must cost next to nothing (goal: within 1.05× of the listing). The
// emulator is limited to 1,200 requests a minute with bursts of 20 (the service's limit ×10, to keep it
// short); the two take turns in rounds of alternating order, a second apart so the bucket refills. Then the
// pull's peak RSS at 10,000 and at 1,000,000 cards (no limit, 1,000 cards a page): the mirror keeps no set
// of ids in memory, so the peak must stay flat.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmulator } from '../lib/emulator.mjs';
import { childEnv, log, runCli } from '../lib/proc.mjs';
import { abbaOrder, figure, median, num, pairedRatio, ratioText, sig } from '../lib/stats.mjs';

const PER_MINUTE = 1200;
const BURST = 20;
const PAGE_SIZE = 50;
const GOAL = 1.05;
const FLAT = 1.25;
const BIG_PAGE = 1000;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A fresh directory holding a config dir and a mirror file's path; removed by the caller. */
function scratch() {
  const dir = mkdtempSync(join(tmpdir(), 'cardboard-bench-mirror-'));
  return { dir, config: join(dir, 'config'), mirror: join(dir, 'mirror.db') };
}

/** One pull into a fresh mirror: its run (ms, rssKb) and its summary. */
async function pullOnce(emu, opts = {}) {
  const s = scratch();
  try {
    const r = await runCli(['mirror', 'pull', '--json'], { env: childEnv({ ...emu.env, CARDBOARD_CONFIG_DIR: s.config, CARDBOARD_MIRROR: s.mirror }), rss: opts.rss });
    return { ...r, summary: JSON.parse(r.stdout) };
  } finally {
    rmSync(s.dir, { recursive: true, force: true });
  }
}

/** Peak RSS (kB) of a pull of a board of `cards` cards, unlimited, BIG_PAGE a page. */
async function peakAt(cards) {
  log(`mirror pull of ${cards.toLocaleString('en')} cards (${BIG_PAGE} a page, no limit): peak RSS`);
  const emu = await startEmulator({ seedCards: cards, pageSize: BIG_PAGE });
  try {
    const r = await pullOnce(emu, { rss: true });
    if (r.summary.total !== cards) throw new Error(`mirror pull holds ${r.summary.total} cards, not ${cards}`);
    return { rssKb: r.rssKb, ms: r.ms };
  } finally {
    await emu.close();
  }
}

/** Run the mirror-pull scenario (this tree's CLI only: the ref has no mirror). */
export async function mirrorPull({ quick }) {
  const cards = quick ? 2_000 : 5_000;
  const runs = quick ? 1 : 3;
  const emu = await startEmulator({ seedCards: cards, pageSize: PAGE_SIZE, rateLimit: `${PER_MINUTE}/min`, burst: BURST });
  const samples = { pull: [], list: [] };
  const s = scratch();
  try {
    const contestants = ['pull', 'list'];
    for (let i = 0; i < runs; i++) {
      for (const who of abbaOrder(contestants, i)) {
        log(`${who === 'pull' ? 'mirror pull' : 'card list --all'} over ${cards} cards under ${PER_MINUTE}/min, round ${i + 1}/${runs}`);
        await sleep(1000);
        if (who === 'pull') {
          const r = await pullOnce(emu);
          if (r.summary.total !== cards) throw new Error(`mirror pull holds ${r.summary.total} cards, not ${cards}`);
          samples.pull.push(r.ms);
        } else {
          const r = await runCli(['card', 'list', '--all', '--format', 'ndjson'], { env: childEnv({ ...emu.env, CARDBOARD_CONFIG_DIR: s.config }), stdoutFile: '/dev/null' });
          samples.list.push(r.ms);
        }
      }
    }
  } finally {
    rmSync(s.dir, { recursive: true, force: true });
    await emu.close();
  }
  const sizes = quick ? [10_000, 100_000] : [10_000, 1_000_000];
  const [small, large] = [await peakAt(sizes[0]), await peakAt(sizes[1])];
  const vsList = pairedRatio(samples.pull, samples.list);
  const growth = large.rssKb / small.rssKb;
  const seconds = (ms) => ms.map((v) => v / 1000);
  const data = {
    cards,
    pageSize: PAGE_SIZE,
    limit: `${PER_MINUTE}/min, burst ${BURST}`,
    runs,
    pullSeconds: seconds(samples.pull).map((v) => sig(v)),
    listSeconds: seconds(samples.list).map((v) => sig(v)),
    memory: { pageSize: BIG_PAGE, sizes, peakMb: [sig(small.rssKb / 1024), sig(large.rssKb / 1024)], seconds: [sig(small.ms / 1000), sig(large.ms / 1000)] },
  };
  const size = (n) => (n >= 1e6 ? `${n / 1e6}M` : `${n / 1e3}k`);
  const rows = [
    {
      scenario: `\`mirror pull\` into a fresh mirror, ${cards.toLocaleString('en')} cards, ${PAGE_SIZE} a page, under ${PER_MINUTE}/min (burst ${BURST})`,
      cardboard: `${figure(seconds(samples.pull), 's')}`,
      beside: `\`card list --all --format ndjson >/dev/null\`: ${figure(seconds(samples.list), 's')}`,
      ratio: sig(vsList.median),
      ratioText: ratioText(vsList),
      goal: `≤ ${GOAL}×`,
      met: vsList.median <= GOAL,
    },
    {
      scenario: `\`mirror pull\` peak RSS, ${size(sizes[0])} and ${size(sizes[1])} cards, ${BIG_PAGE} a page, no limit`,
      cardboard: `${num(small.rssKb / 1024)} MB / ${num(large.rssKb / 1024)} MB (${num(small.ms / 1000)} s / ${num(large.ms / 1000)} s)`,
      beside: '—',
      ratio: sig(growth),
      ratioText: `×${num(growth)} from ${size(sizes[0])} to ${size(sizes[1])}`,
      goal: `flat (≤ ×${FLAT})`,
      met: growth <= FLAT,
    },
  ];
  log(`mirror pull ${num(median(samples.pull) / 1000)} s, card list ${num(median(samples.list) / 1000)} s; peak ${num(small.rssKb / 1024)} → ${num(large.rssKb / 1024)} MB`);
  return { data, rows };
}
