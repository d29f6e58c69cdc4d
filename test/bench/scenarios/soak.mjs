// Exactly once, at length: an import without --match-on, in each Update Mode, under faults that may
// apply a POST and lose its answer (500-after, reset-after), killed with SIGKILL six times and resumed
// with the same command each time, then run to the end. The board is read back: every row of the file
// exactly once, none missing, and every row accounted for in --results. Not a speed figure: the goal is
// 0 duplicates and 0 missing cards. At --concurrency 8: eight rows in flight at each kill, the hardest case for
// the journal. With --against, the ref's CLI goes through the same, after ours.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BOARD, startEmulator } from '../lib/emulator.mjs';
import { childEnv, log, NotInRef, runCli } from '../lib/proc.mjs';
import { notIn } from '../lib/stats.mjs';

const KILLS = 6;
const FAULTS = '500-after:0.05,reset-after:0.05';

const journalLines = (path) => {
  try {
    return readFileSync(path, 'utf8').split('\n').length - 1;
  } catch {
    return 0;
  }
};

/** Run the import until the journal has grown by `grow` lines (or it ends), then SIGKILL it. */
async function killedRun(client, args, env, journal, grow) {
  const target = journalLines(journal) + grow;
  const child = spawn(process.execPath, [client.bin, ...args], { env, stdio: 'ignore' });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  while (child.exitCode === null && journalLines(journal) < target) await new Promise((r) => setTimeout(r, 10));
  child.kill('SIGKILL');
  await exited;
}

async function soakOne(rows, updateMode, client) {
  const dir = mkdtempSync(join(tmpdir(), 'cardboard-soak-'));
  const emu = await startEmulator({ updateMode, faults: FAULTS, faultSeed: 18 });
  try {
    const file = join(dir, 'soak.csv');
    const lines = ['Name,Status,Owner,Priority'];
    for (let i = 1; i <= rows; i++) lines.push(`soak-${i},Open,Owner ${i % 7},P${i % 3}`);
    writeFileSync(file, `${lines.join('\n')}\n`);
    const journal = join(dir, 'soak.journal');
    const results = join(dir, 'results.csv');
    const env = childEnv({ ...emu.env, CARDBOARD_CONFIG_DIR: dir });
    const args = ['import', file, '--journal', journal, '--concurrency', '8'];
    for (let k = 0; k < KILLS; k++) await killedRun(client, args, env, journal, Math.ceil(rows / (KILLS + 2)));
    const last = await runCli([...args, '--results', results, '--json'], { env, allowFailure: true, client });
    const summary = JSON.parse(last.stdout);
    const cards = (await emu.state())[BOARD].cards;
    const counts = new Map();
    for (const c of cards) counts.set(c.Name, (counts.get(c.Name) ?? 0) + 1);
    const duplicates = [...counts.values()].reduce((n, c) => n + Math.max(0, c - 1), 0);
    let missing = 0;
    for (let i = 1; i <= rows; i++) if (!counts.has(`soak-${i}`)) missing++;
    const accounted = new Set(readFileSync(results, 'utf8').trim().split('\n').slice(1).map((l) => l.split(',')[0])).size;
    return { updateMode, rows, kills: KILLS, exit: last.code, duplicates, missing, accounted, settled: summary.settled, skipped: summary.skipped, created: summary.created, uncertain: summary.uncertain };
  } finally {
    await emu.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const text = (r) =>
  `${r.duplicates} duplicates, ${r.missing} missing, ${r.accounted} of ${r.rows} rows in --results; last run: ${r.skipped} skipped, ${r.created} created, ${r.settled ?? '—'} settled by reading, ${r.uncertain} uncertain, exit ${r.exit}`;
const ok = (r) => r.duplicates === 0 && r.missing === 0 && r.accounted === r.rows && r.exit === 0;

/** Run the soak scenario for each client. */
export async function soak({ quick, clients, ref }) {
  const rows = quick ? 300 : 2000;
  const runs = [];
  for (const mode of ['Always Create New', 'Update if exists']) {
    const byClient = {};
    for (const client of clients) {
      log(`soak, ${client.label}: ${rows} rows, ${mode}, ${FAULTS}, ${KILLS} × kill -9 and resume`);
      try {
        byClient[client.label] = await soakOne(rows, mode, client);
      } catch (err) {
        if (!(err instanceof NotInRef)) throw err;
        byClient[client.label] = { missing: true };
      }
    }
    runs.push({ mine: byClient.cardboard, theirs: ref ? byClient[ref.label] : undefined });
  }
  return {
    data: { faults: FAULTS, runs: runs.map((r) => r.mine), ref: ref ? { label: ref.label, runs: runs.map((r) => r.theirs) } : undefined },
    rows: runs.map(({ mine: r, theirs }) => {
      const row = {
        scenario: `soak: ${r.rows} rows, --concurrency 8, ${r.updateMode}, no key, ${FAULTS}, ${r.kills} × kill -9 and resume`,
        cardboard: text(r),
        beside: '—',
        ratio: r.duplicates + r.missing,
        ratioText: '—',
        goal: '0 duplicates, 0 missing, every row in --results, exit 0',
        met: ok(r),
      };
      if (theirs?.missing) row.ref = row.vsRef = notIn(ref.short);
      else if (theirs) {
        row.ref = `${ref.short}: ${text(theirs)}`;
        row.vsRef = ok(theirs) ? 'both met' : `${ref.short} missed`;
      }
      return row;
    }),
    note: ref ? 'soak: the ref after ours.' : undefined,
  };
}
