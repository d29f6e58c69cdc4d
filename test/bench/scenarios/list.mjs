// `cardboard card list --all --format ndjson` over a seeded board beside a sequential `fetch` loop over the
// same pages writing the same NDJSON; both write to a file, whose line count is checked.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startEmulator } from '../lib/emulator.mjs';
import { childEnv, log, median, OUT, runCli, runMeasured, sig } from '../lib/proc.mjs';

const PAGE_SIZE = 50;
const GOAL = 1;
const FLAT = 1.25;
const PEER = fileURLToPath(new URL('../peers/fetch-pages.mjs', import.meta.url));

function lines(path) {
  const text = readFileSync(path, 'utf8');
  rmSync(path, { force: true });
  let n = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

/** Run the list scenario. */
export async function list({ quick }) {
  const cards = quick ? 20_000 : 100_000;
  const runs = quick ? 1 : 5;
  const emu = await startEmulator({ seedCards: cards, pageSize: PAGE_SIZE });
  const config = mkdtempSync(join(tmpdir(), 'cardboard-bench-'));
  const env = childEnv({ ...emu.env, CARDBOARD_CONFIG_DIR: config });
  const out = join(OUT, 'list.ndjson');
  const mine = { rate: [], rss: [] };
  const loop = { rate: [], rss: [] };
  let smallRss;
  try {
    const tenth = cards / 10;
    log(`card list --limit ${tenth} (RSS at a tenth of the cards)`);
    const small = await runCli(['card', 'list', '--all', '--limit', String(tenth), '--format', 'ndjson'], { env, rss: true, stdoutFile: out });
    if (lines(out) !== tenth) throw new Error('card list --limit wrote the wrong number of cards');
    smallRss = small.rssKb;
    for (let i = 0; i < runs; i++) {
      log(`card list --all over ${cards} cards, run ${i + 1}/${runs}`);
      const r = await runCli(['card', 'list', '--all', '--format', 'ndjson'], { env, rss: true, stdoutFile: out });
      if (lines(out) !== cards) throw new Error('card list --all wrote the wrong number of cards');
      mine.rate.push(cards / (r.ms / 1000));
      mine.rss.push(r.rssKb);
      const p = await runMeasured(process.execPath, [PEER], { env, rss: true, stdoutFile: out });
      if (p.code !== 0 || lines(out) !== cards) throw new Error(`fetch loop failed: ${p.stderr.slice(-500)}`);
      loop.rate.push(cards / (p.ms / 1000));
      loop.rss.push(p.rssKb);
    }
  } finally {
    rmSync(config, { recursive: true, force: true });
    await emu.close();
  }
  const rate = median(mine.rate);
  const rss = Math.max(...mine.rss);
  const ratio = rate / median(loop.rate);
  const growth = rss / smallRss;
  const data = {
    cards,
    pageSize: PAGE_SIZE,
    runs,
    cardboardCardsPerSec: sig(rate),
    cardboardPeakMb: sig(rss / 1024),
    cardboardPeakMbAtTenth: sig(smallRss / 1024),
    fetchLoopCardsPerSec: sig(median(loop.rate)),
    fetchLoopPeakMb: sig(Math.max(...loop.rss) / 1024),
  };
  return {
    data,
    rows: [
      {
        scenario: `\`card list --all --format ndjson\`, ${cards.toLocaleString('en')} cards, ${PAGE_SIZE} a page`,
        cardboard: `${sig(rate)} cards/s, peak ${sig(rss / 1024)} MB (${sig(smallRss / 1024)} MB at ${(cards / 10).toLocaleString('en')})`,
        beside: `sequential \`fetch\` loop: ${sig(median(loop.rate))} cards/s, peak ${sig(Math.max(...loop.rss) / 1024)} MB`,
        ratio: sig(ratio),
        ratioText: `${sig(ratio)}×`,
        goal: `≥ ${GOAL}×, RSS flat (≤ ×${FLAT})`,
        met: ratio >= GOAL && growth <= FLAT,
      },
    ],
  };
}
