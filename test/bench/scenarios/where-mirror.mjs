// `card list --where … --mirror` over a mirror of 100,000 cards beside the same `card list --where …` read live
// from the emulator. The live read runs once with no rate limit (its requests counted in the emulator's log);
// its time under the service's 120 requests a minute is computed, not waited for (about 17 minutes): a burst of
// 20 requests at once, then 2 a second, so (requests − 20) / 2 s, or the measured time when that is longer.
// The mirror is filled with the emulator's cards through the store itself (as a complete pull leaves it),
// and both runs must print the same cards.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BOARD, startEmulator } from '../lib/emulator.mjs';
import { fillMirror } from '../lib/mirror.mjs';
import { childEnv, log, OUT, runCli } from '../lib/proc.mjs';
import { figure, median, num, sig } from '../lib/stats.mjs';

const PAGE_SIZE = 50;
const RATE_PER_MIN = 120;
const BURST = 20;
const GOAL_MS = 1000;
const GOAL_RATIO = 100;
// The seeded cards: Status To do/Doing/Done, Owner Ada/Grace/Linus/Margaret in turn; about 1 in 12 match.
const WHERE = ['--where', 'Status=Doing', '--where', 'Owner~gr'];

/** Lines of an NDJSON file, parsed, and the file removed. */
function ids(path) {
  const text = readFileSync(path, 'utf8');
  rmSync(path, { force: true });
  return text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l)._id);
}

/** Run the where-mirror scenario (this tree's CLI only: the ref has no mirror). */
export async function whereMirror({ quick }) {
  const cards = quick ? 20_000 : 100_000;
  const runs = quick ? 3 : 7;
  const emu = await startEmulator({ seedCards: cards, pageSize: PAGE_SIZE });
  const dir = mkdtempSync(join(tmpdir(), 'cardboard-bench-'));
  const env = childEnv({ ...emu.env, CARDBOARD_CONFIG_DIR: dir, CARDBOARD_MIRROR: join(dir, 'mirror.db') });
  const out = join(OUT, 'where-mirror.ndjson');
  try {
    log(`filling the mirror with ${cards} cards`);
    const state = await emu.state();
    await fillMirror(env, emu.url, state[BOARD].cards, { pageSize: PAGE_SIZE, schema: true });

    log('card list --where, live (no rate limit; its requests counted)');
    const before = (await emu.requests()).length;
    const live = await runCli(['card', 'list', ...WHERE, '--format', 'ndjson'], { env, stdoutFile: out });
    const requests = (await emu.requests()).length - before;
    const liveIds = ids(out);
    const computedMs = Math.max(live.ms, ((requests - BURST) / (RATE_PER_MIN / 60)) * 1000);

    const mirrorMs = [];
    const cpuMs = [];
    const peakKb = [];
    for (let i = 0; i < runs; i++) {
      log(`card list --where --mirror, round ${i + 1}/${runs}`);
      const mark = (await emu.requests()).length;
      const r = await runCli(['card', 'list', ...WHERE, '--mirror', '--format', 'ndjson'], { env, stdoutFile: out, rss: true });
      if ((await emu.requests()).length !== mark) throw new Error('card list --mirror sent a request');
      const got = ids(out);
      if (liveIds.length === 0) throw new Error('no card matched: the expressions do not fit the seeded cards');
      if (got.length !== liveIds.length || got.some((id, j) => id !== liveIds[j])) throw new Error('the mirror and the live read gave different cards');
      mirrorMs.push(r.ms);
      if (r.cpuMs !== undefined) cpuMs.push(r.cpuMs);
      peakKb.push(r.rssKb);
    }
    const ms = median(mirrorMs);
    const ratio = computedMs / ms;
    const data = { cards, pageSize: PAGE_SIZE, matching: liveIds.length, runs, mirrorMs: mirrorMs.map((v) => sig(v)), mirrorCpuMs: cpuMs.map((v) => sig(v)), mirrorPeakMb: sig(Math.max(...peakKb) / 1024), live: { requests, measuredMs: sig(live.ms), computedMsAt120PerMin: sig(computedMs) }, ratio: sig(ratio) };
    const row = {
      scenario: `\`card list --where Status=Doing --where Owner~gr --mirror\`, ${cards.toLocaleString('en')} mirrored cards (${liveIds.length.toLocaleString('en')} match)`,
      cardboard: `${figure(mirrorMs, 'ms')}${cpuMs.length > 0 ? ` (CPU ${figure(cpuMs, 'ms')})` : ''}, peak ${num(Math.max(...peakKb) / 1024)} MB, 0 requests`,
      beside: `live \`--where\`: ${requests.toLocaleString('en')} requests = ${num(computedMs / 1000)} s at ${RATE_PER_MIN}/min (computed: (requests − ${BURST} burst) / 2 a second; ${num(live.ms / 1000)} s unlimited)`,
      ratio: sig(ratio),
      ratioText: `${num(ratio)}×`,
      goal: `< ${GOAL_MS} ms, ≥ ${GOAL_RATIO}×`,
      met: ms < GOAL_MS && ratio >= GOAL_RATIO,
    };
    return { data, rows: [row] };
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await emu.close();
  }
}
