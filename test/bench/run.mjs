// `npm run bench`: every scenario of issue 6 §1, each figure beside its peer measured in the same run, written
// to test/bench/results.json and results.md. Flags: --quick (smaller inputs, one run each), --only a,b,
// --node PATH (repeatable: the memory and match-memory scenarios run on each of these Nodes instead of the bench's own).
// Needs the build (npm run bench builds first). The emulator always runs as a child process.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { log } from './lib/proc.mjs';
import { importLimit } from './scenarios/import-limit.mjs';
import { importSpeed } from './scenarios/import-speed.mjs';
import { list } from './scenarios/list.mjs';
import { matchMemory } from './scenarios/match-memory.mjs';
import { memory } from './scenarios/memory.mjs';
import { resync } from './scenarios/resync.mjs';
import { soak } from './scenarios/soak.mjs';
import { startup } from './scenarios/startup.mjs';
import { webhook } from './scenarios/webhook.mjs';
import { webhookMemory } from './scenarios/webhook-memory.mjs';

const SCENARIOS = { startup, 'import-speed': importSpeed, 'import-limit': importLimit, memory, list, webhook, 'webhook-memory': webhookMemory, resync, 'match-memory': matchMemory, soak };
const JSON_PATH = fileURLToPath(new URL('./results.json', import.meta.url));
const MD_PATH = fileURLToPath(new URL('./results.md', import.meta.url));

function parseArgs(argv) {
  const opts = { quick: false, only: Object.keys(SCENARIOS), nodes: [] };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--quick') opts.quick = true;
    else if (argv[i] === '--only') opts.only = argv[++i].split(',');
    else if (argv[i].startsWith('--only=')) opts.only = argv[i].slice(7).split(',');
    else if (argv[i] === '--node') opts.nodes.push(argv[++i]);
    else throw new Error(`unknown argument ${argv[i]}; use --quick, --node PATH and --only ${Object.keys(SCENARIOS).join(',')}`);
  }
  const unknown = opts.only.filter((name) => !(name in SCENARIOS));
  if (unknown.length) throw new Error(`unknown scenario ${unknown.join(', ')}; known: ${Object.keys(SCENARIOS).join(', ')}`);
  return opts;
}

const cell = (text) => String(text).replaceAll('|', '\\|');

/** The commit measured, and whether src/ or bin/ differed from it (a shared checkout may hold work in progress). */
function revision() {
  try {
    const git = (...args) => execFileSync('git', args, { cwd: fileURLToPath(new URL('../..', import.meta.url)), encoding: 'utf8' }).trim();
    const dirty = git('status', '--porcelain', '--', 'src', 'bin') !== '';
    return `${git('rev-parse', '--short', 'HEAD')}${dirty ? ' + uncommitted changes in src/ or bin/' : ''}`;
  } catch {
    return 'unknown (not a git checkout)';
  }
}

/** The markdown table the README embeds, plus how and where it was measured. */
function markdown(results) {
  const lines = ['| scenario | cardboard | beside it (same run) | ratio | goal | met? |', '|---|---|---|---|---|---|'];
  for (const name of Object.keys(SCENARIOS)) {
    const s = results.scenarios[name];
    if (!s) continue;
    for (const r of s.rows) {
      const met = r.met === null ? '—' : r.met ? 'yes' : '**no**';
      lines.push(`| ${[r.scenario, r.cardboard, r.beside, r.ratioText, r.goal, met].map(cell).join(' | ')} |`);
    }
  }
  const runs = Object.entries(results.scenarios).map(([name, s]) => `${name} ${s.at} at ${s.revision}${s.quick ? ' (--quick)' : ''}`);
  lines.push('', `Measured with Node ${results.machine.node} on ${results.machine.cpus} × ${results.machine.cpuModel}; load average at start ${results.machine.loadavg.join(', ')}.`);
  lines.push(`Runs: ${runs.join('; ')}.`);
  return `${lines.join('\n')}\n`;
}

const opts = parseArgs(process.argv.slice(2));
if (!existsSync(fileURLToPath(new URL('../../dist/main.js', import.meta.url)))) throw new Error('dist/ is missing: run `npm run build` (npm run bench does)');
const previous = existsSync(JSON_PATH) ? JSON.parse(readFileSync(JSON_PATH, 'utf8')) : { scenarios: {} };
const results = {
  machine: { node: process.version, cpus: cpus().length, cpuModel: cpus()[0]?.model.trim(), loadavg: loadavg().map((v) => Math.round(v * 100) / 100) },
  // --only keeps the other scenarios' last figures; each scenario carries the time it ran.
  scenarios: previous.scenarios ?? {},
};
let failed = false;
for (const name of opts.only) {
  const started = Date.now();
  log(`${name}…`);
  try {
    const { data, rows } = await SCENARIOS[name]({ quick: opts.quick, nodes: opts.nodes.length > 0 ? opts.nodes : undefined });
    results.scenarios[name] = { at: new Date().toISOString().slice(0, 16).replace('T', ' '), revision: revision(), quick: opts.quick, seconds: Math.round((Date.now() - started) / 1000), data, rows };
    log(`${name} done in ${Math.round((Date.now() - started) / 1000)} s`);
  } catch (err) {
    failed = true;
    log(`${name} FAILED: ${err.stack ?? err}`);
  }
}
writeFileSync(JSON_PATH, `${JSON.stringify(results, null, 2)}\n`);
const md = markdown(results);
writeFileSync(MD_PATH, md);
process.stdout.write(md);
process.exitCode = failed ? 1 : 0;
