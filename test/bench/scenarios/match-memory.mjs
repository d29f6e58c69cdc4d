// Peak RSS of a `--match-on` run against a 1,000,000-card board (issue 10 §8): the index keeps each card's key
// hash, `_id` and a digest of the mapped fields off the V8 heap (src/import/card-table.ts). The cardboard process
// alone is measured (GNU time's %M, else polled VmHWM); the emulator runs in its own process, a fresh one for
// each Node given with --node, so every run updates the same 667 cards.
import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmulator } from '../lib/emulator.mjs';
import { childEnv, log, OUT, runCli, sig } from '../lib/proc.mjs';

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

async function once(node, version, cards, path) {
  log(`node ${version}: seeding ${cards} cards into the emulator`);
  const emu = await startEmulator({ seedCards: cards, pageSize: 500, updateMode: 'Update if exists' });
  const config = mkdtempSync(join(tmpdir(), 'cardboard-bench-'));
  try {
    log(`node ${version}: import with --match-on Name against ${cards} cards`);
    const r = await runCli(['import', path, '--match-on', 'Name', '--json', '--journal', join(config, 'journal')], {
      node,
      rss: true,
      env: childEnv({ ...emu.env, CARDBOARD_CONFIG_DIR: config }),
    });
    return { mb: r.rssKb / 1024, ms: r.ms, summary: JSON.parse(r.stdout) };
  } finally {
    await emu.close();
    rmSync(config, { recursive: true, force: true });
  }
}

/** Run the memory scenario of --match-on on `nodes` (paths of node binaries; the bench's own Node when none). */
export async function matchMemory({ quick, nodes = [process.execPath] }) {
  const cards = quick ? 200_000 : 1_000_000;
  const rows = 1000;
  const path = rowsFile(rows);
  const runs = [];
  for (const node of nodes) {
    const version = execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();
    runs.push({ version, ...(await once(node, version, cards, path)) });
  }
  return {
    data: runs.map((r) => ({
      node: r.version,
      cards,
      rows,
      peakRssMb: sig(r.mb),
      wallSeconds: sig(r.ms / 1000),
      summary: { updated: r.summary.updated, unchanged: r.summary.unchanged, created: r.summary.created },
    })),
    rows: runs.map((r) => ({
      scenario: `--match-on against a ${cards.toLocaleString('en')}-card board (${rows} rows), Node ${r.version}`,
      cardboard: `peak RSS ${sig(r.mb)} MB; ${sig(r.ms / 1000)} s (${r.summary.updated} updated, ${r.summary.unchanged} unchanged)`,
      beside: '—',
      ratio: sig(r.mb / GOAL_MB),
      ratioText: `${sig((r.mb / GOAL_MB) * 100)} % of the goal`,
      goal: `≤ ${GOAL_MB} MB`,
      met: r.mb <= GOAL_MB && r.summary.created === 0,
    })),
  };
}
