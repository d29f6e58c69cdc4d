// `cardboard card list --all --format ndjson` over a seeded board (and the ref's, with --against) beside a
// sequential `fetch` loop over the same pages writing the same NDJSON; each writes to a file, whose line count is
// checked. The clients share one emulator (listing changes nothing) and take turns in rounds of alternating order.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startEmulator } from '../lib/emulator.mjs';
import { childEnv, log, NotInRef, OUT, runCli, runMeasured } from '../lib/proc.mjs';
import { abbaOrder, figure, median, notIn, num, pairedRatio, ratioText, sig } from '../lib/stats.mjs';

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

/** Run the list scenario for `clients`. */
export async function list({ quick, clients, ref }) {
  const cards = quick ? 20_000 : 100_000;
  const runs = quick ? 1 : 5;
  const emu = await startEmulator({ seedCards: cards, pageSize: PAGE_SIZE });
  const config = mkdtempSync(join(tmpdir(), 'cardboard-bench-'));
  const env = childEnv({ ...emu.env, CARDBOARD_CONFIG_DIR: config });
  const out = join(OUT, 'list.ndjson');
  const contestants = [...clients.map((c) => ({ name: c.label, client: c })), { name: 'fetch loop' }];
  const samples = Object.fromEntries(contestants.map((c) => [c.name, { rate: [], rss: [] }]));
  const missing = new Set();
  let smallRss;
  try {
    const tenth = cards / 10;
    log(`card list --limit ${tenth} (RSS at a tenth of the cards)`);
    const small = await runCli(['card', 'list', '--all', '--limit', String(tenth), '--format', 'ndjson'], { env, rss: true, stdoutFile: out });
    if (lines(out) !== tenth) throw new Error('card list --limit wrote the wrong number of cards');
    smallRss = small.rssKb;
    for (let i = 0; i < runs; i++) {
      log(`card list --all over ${cards} cards, round ${i + 1}/${runs}`);
      for (const who of abbaOrder(contestants, i)) {
        if (missing.has(who.name)) continue;
        let r;
        if (who.client) {
          try {
            r = await runCli(['card', 'list', '--all', '--format', 'ndjson'], { env, rss: true, stdoutFile: out, client: who.client });
          } catch (err) {
            if (!(err instanceof NotInRef)) throw err;
            missing.add(who.name);
            continue;
          }
        } else {
          r = await runMeasured(process.execPath, [PEER], { env, rss: true, stdoutFile: out });
          if (r.code !== 0) throw new Error(`fetch loop failed: ${r.stderr.slice(-500)}`);
        }
        if (lines(out) !== cards) throw new Error(`${who.name} wrote the wrong number of cards`);
        samples[who.name].rate.push(cards / (r.ms / 1000));
        samples[who.name].rss.push(r.rssKb);
      }
    }
  } finally {
    rmSync(config, { recursive: true, force: true });
    await emu.close();
  }
  const mine = samples.cardboard;
  const loop = samples['fetch loop'];
  const rss = Math.max(...mine.rss);
  const vsLoop = pairedRatio(mine.rate, loop.rate);
  const growth = rss / smallRss;
  const figures = (s) => ({ cardsPerSec: sig(median(s.rate)), peakMb: sig(Math.max(...s.rss) / 1024), samples: s.rate.map((v) => sig(v)) });
  const data = { cards, pageSize: PAGE_SIZE, runs, cardboard: figures(mine), cardboardPeakMbAtTenth: sig(smallRss / 1024), fetchLoop: figures(loop) };
  const row = {
    scenario: `\`card list --all --format ndjson\`, ${cards.toLocaleString('en')} cards, ${PAGE_SIZE} a page`,
    cardboard: `${figure(mine.rate, 'cards/s')}, peak ${num(rss / 1024)} MB (${num(smallRss / 1024)} MB at ${(cards / 10).toLocaleString('en')})`,
    beside: `sequential \`fetch\` loop: ${figure(loop.rate, 'cards/s')}, peak ${num(Math.max(...loop.rss) / 1024)} MB`,
    ratio: sig(vsLoop.median),
    ratioText: ratioText(vsLoop),
    goal: `≥ ${GOAL}×, RSS flat (≤ ×${FLAT})`,
    met: vsLoop.median >= GOAL && growth <= FLAT,
  };
  if (ref && missing.has(ref.label)) row.ref = row.vsRef = notIn(ref.short);
  else if (ref) {
    const theirs = samples[ref.label];
    data.ref = figures(theirs);
    row.ref = `${ref.short}: ${figure(theirs.rate, 'cards/s')}, peak ${num(Math.max(...theirs.rss) / 1024)} MB`;
    row.vsRef = `${ratioText(pairedRatio(mine.rate, theirs.rate))} cards/s`;
  }
  return { data, rows: [row], note: ref ? 'list: the ref in every round.' : undefined };
}
