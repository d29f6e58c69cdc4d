// Peak RSS of a `--match-on` run against a 1,000,000-card board (issue 10 §8): the index keeps each card's key
// hash, `_id` and a digest of the mapped fields off the V8 heap (src/import/card-table.ts). The cardboard process
// alone is measured (GNU time's %M, else polled VmHWM); the emulator runs in its own process.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmulator } from '../lib/emulator.mjs';
import { childEnv, log, OUT, runCli, sig } from '../lib/proc.mjs';
import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';

const GOAL_MB = 150;

/** Run the memory scenario of --match-on. */
export async function matchMemory({ quick }) {
  const cards = quick ? 200_000 : 1_000_000;
  const rows = 1000;
  mkdirSync(OUT, { recursive: true });
  const path = join(OUT, `match-${rows}.csv`);
  const fd = openSync(path, 'w');
  let text = 'Name,Status\n';
  for (let i = 1; i <= rows; i++) text += `Demo card ${i * 7},Done\n`;
  writeSync(fd, text);
  closeSync(fd);
  log(`seeding ${cards} cards into the emulator`);
  const emu = await startEmulator({ seedCards: cards, pageSize: 500, updateMode: 'Update if exists' });
  const config = mkdtempSync(join(tmpdir(), 'cardboard-bench-'));
  let r;
  try {
    log(`import ${rows} rows with --match-on Name against ${cards} cards`);
    r = await runCli(['import', path, '--match-on', 'Name', '--json', '--journal', join(config, 'journal')], {
      rss: true,
      env: childEnv({ ...emu.env, CARDBOARD_CONFIG_DIR: config }),
    });
  } finally {
    await emu.close();
    rmSync(config, { recursive: true, force: true });
  }
  const s = JSON.parse(r.stdout);
  const mb = r.rssKb / 1024;
  return {
    data: { cards, rows, peakRssMb: sig(mb), wallSeconds: sig(r.ms / 1000), summary: { updated: s.updated, unchanged: s.unchanged, created: s.created } },
    rows: [
      {
        scenario: `--match-on against a ${cards.toLocaleString('en')}-card board (${rows} rows)`,
        cardboard: `peak RSS ${sig(mb)} MB; ${sig(r.ms / 1000)} s (${s.updated} updated, ${s.unchanged} unchanged)`,
        beside: '—',
        ratio: sig(mb / GOAL_MB),
        ratioText: `${sig((mb / GOAL_MB) * 100)} % of the goal`,
        goal: `≤ ${GOAL_MB} MB`,
        met: mb <= GOAL_MB && s.created === 0,
      },
    ],
  };
}
