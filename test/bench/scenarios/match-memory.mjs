// Peak RSS of a `--match-on` run (at --concurrency 8, as the other memory figures) against a 1,000,000-card board: the index keeps each card's key
// hash, `_id` and a digest of the mapped fields off the V8 heap (src/import/card-table.ts). The cardboard process
// alone is measured (GNU time's %M, else polled VmHWM); the emulator runs in its own process, a fresh one for
// each Node and each client (this tree's CLI, the ref's), so every run updates the same 667 cards.
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmulator } from '../lib/emulator.mjs';
import { childEnv, log, NotInRef, OUT, runCli } from '../lib/proc.mjs';
import { abbaOrder, notIn, num, sig } from '../lib/stats.mjs';

const GOAL_MB = 150;

/** The 1,000-row import: every 7th seeded card, its Status set to Done. */
function rowsFile(rows) {
  mkdirSync(OUT, { recursive: true });
  const path = join(OUT, `match-${rows}.csv`);
  const fd = openSync(path, 'w');
  let text = 'Name,Status\n';
  for (let i = 1; i <= rows; i++) text += `Demo card ${i * 7},Done\n`;
  writeSync(fd, text);
  closeSync(fd);
  return path;
}

async function once(node, version, cards, path, client) {
  log(`node ${version}, ${client.label}: seeding ${cards} cards into the emulator`);
  const emu = await startEmulator({ seedCards: cards, pageSize: 500, updateMode: 'Update if exists' });
  const config = mkdtempSync(join(tmpdir(), 'cardboard-bench-'));
  try {
    log(`node ${version}, ${client.label}: import with --match-on Name against ${cards} cards`);
    const r = await runCli(['import', path, '--match-on', 'Name', '--concurrency', '8', '--json', '--journal', join(config, 'journal')], {
      node,
      client,
      rss: true,
      env: childEnv({ ...emu.env, CARDBOARD_CONFIG_DIR: config }),
    });
    return { mb: r.rssKb / 1024, ms: r.ms, summary: JSON.parse(r.stdout) };
  } catch (err) {
    if (err instanceof NotInRef) return { missing: true };
    throw err;
  } finally {
    await emu.close();
    rmSync(config, { recursive: true, force: true });
  }
}

/** Run the memory scenario of --match-on on each Node of `nodes`, for each client (this tree's, the ref's). */
export async function matchMemory({ quick, nodes, clients, ref }) {
  const cards = quick ? 200_000 : 1_000_000;
  const rows = 1000;
  const path = rowsFile(rows);
  const runs = [];
  for (const { path: node, version } of nodes) {
    const byClient = {};
    // One run each: peak RSS is a figure noise hardly moves. The ref first on every other line, so neither is always first.
    for (const client of abbaOrder(clients, runs.length)) byClient[client.label] = await once(node, version, cards, path, client);
    runs.push({ version, mine: byClient.cardboard, theirs: ref ? byClient[ref.label] : undefined });
  }
  const summaryOf = (r) => ({ updated: r.summary.updated, unchanged: r.summary.unchanged, created: r.summary.created });
  const figures = (r) => (r.missing ? 'not in ref' : { peakRssMb: sig(r.mb), wallSeconds: sig(r.ms / 1000), summary: summaryOf(r) });
  return {
    data: runs.map((r) => ({ node: r.version, cards, rows, ...figures(r.mine), ref: r.theirs && figures(r.theirs) })),
    rows: runs.map((r) => {
      const row = {
        scenario: `--match-on --concurrency 8 against a ${cards.toLocaleString('en')}-card board (${rows} rows), Node ${r.version}`,
        cardboard: `peak RSS ${num(r.mine.mb)} MB; ${num(r.mine.ms / 1000)} s (${r.mine.summary.updated} updated, ${r.mine.summary.unchanged} unchanged)`,
        beside: '—',
        ratio: sig(r.mine.mb / GOAL_MB),
        ratioText: `${num((r.mine.mb / GOAL_MB) * 100)} % of the goal`,
        goal: `≤ ${GOAL_MB} MB`,
        met: r.mine.mb <= GOAL_MB && r.mine.summary.created === 0,
      };
      if (r.theirs?.missing) row.ref = row.vsRef = notIn(ref.short);
      else if (r.theirs) {
        row.ref = `${ref.short}: peak RSS ${num(r.theirs.mb)} MB; ${num(r.theirs.ms / 1000)} s`;
        row.vsRef = `${num(r.mine.mb / r.theirs.mb)}× RSS`;
      }
      return row;
    }),
    note: ref ? 'match-memory: the ref on every Node line.' : undefined,
  };
}
