// `npm run bench`: every scenario, each figure beside its peer measured in the same run, written to
// test/bench/results.json and results.md. Flags (see USAGE in lib/stats.mjs): --quick (smaller inputs, one
// round), --only a,b, --node LINE|PATH (repeatable: the memory, match-memory and startup scenarios add one row per
// Node), --against REF (build that git ref under test/bench/out/ and measure its CLI beside this tree's, interleaved).
// Needs the build (npm run bench builds first). The emulator is always this tree's, as a child process.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { log, SELF } from './lib/proc.mjs';
import { resolveNodes } from './lib/nodes.mjs';
import { buildRef, refClient, resolveRef } from './lib/ref.mjs';
import { parseArgs, SCENARIO_NAMES, USAGE, UsageError } from './lib/stats.mjs';
import { importLimit } from './scenarios/import-limit.mjs';
import { importSpeed } from './scenarios/import-speed.mjs';
import { list } from './scenarios/list.mjs';
import { matchMemory } from './scenarios/match-memory.mjs';
import { memory } from './scenarios/memory.mjs';
import { mirrorPull } from './scenarios/mirror-pull.mjs';
import { mirrorTeam } from './scenarios/mirror-team.mjs';
import { resync } from './scenarios/resync.mjs';
import { resyncMirror } from './scenarios/resync-mirror.mjs';
import { soak } from './scenarios/soak.mjs';
import { startup } from './scenarios/startup.mjs';
import { webhook } from './scenarios/webhook.mjs';
import { webhookMemory } from './scenarios/webhook-memory.mjs';
import { whereMirror } from './scenarios/where-mirror.mjs';

const SCENARIOS = { startup, 'import-speed': importSpeed, 'import-limit': importLimit, memory, list, webhook, 'webhook-memory': webhookMemory, resync, 'resync-mirror': resyncMirror, 'match-memory': matchMemory, soak, 'where-mirror': whereMirror, 'mirror-pull': mirrorPull, 'mirror-team': mirrorTeam };
const JSON_PATH = fileURLToPath(new URL('./results.json', import.meta.url));
const MD_PATH = fileURLToPath(new URL('./results.md', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

const cell = (text) => String(text ?? '—').replaceAll('|', '\\|');

/** The commit measured, and whether src/ or bin/ differed from it (a shared checkout may hold work in progress). */
function revision() {
  try {
    const git = (...args) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();
    const dirty = git('status', '--porcelain', '--', 'src', 'bin') !== '';
    return `${git('rev-parse', '--short', 'HEAD')}${dirty ? ' + uncommitted changes in src/ or bin/' : ''}`;
  } catch {
    return 'unknown (not a git checkout)';
  }
}

/** The markdown table the README embeds, plus how, where and against what it was measured. */
function markdown(results) {
  const lines = [
    '| scenario | cardboard | beside it (same run) | ratio | goal | met? | ref (same run) | vs ref |',
    '|---|---|---|---|---|---|---|---|',
  ];
  for (const name of SCENARIO_NAMES) {
    const s = results.scenarios[name];
    if (!s) continue;
    for (const r of s.rows) {
      const met = r.met === null || r.met === undefined ? '—' : r.met ? 'yes' : '**no**';
      lines.push(`| ${[r.scenario, r.cardboard, r.beside, r.ratioText, r.goal, met, r.ref, r.vsRef].map(cell).join(' | ')} |`);
    }
  }
  const m = results.machine;
  const runs = SCENARIO_NAMES.filter((n) => results.scenarios[n]).map((name) => {
    const s = results.scenarios[name];
    const extra = [s.quick ? '--quick' : '', s.against ? `against ${s.against}` : '', s.loadavg ? `load ${s.loadavg[0]}` : ''].filter(Boolean).join(', ');
    return `${name} ${s.at} at ${s.revision}${extra ? ` (${extra})` : ''}`;
  });
  lines.push('');
  lines.push(`Machine: ${m.cpus} × ${m.cpuModel}; the bench ran on Node ${m.node}${m.nodes?.length > 1 ? `, the per-Node rows also on ${m.nodes.slice(1).join(', ')}` : ''}; load average at start ${m.loadavg.join(', ')}.`);
  lines.push(`Commit measured: ${m.revision}${m.against ? `; ref: ${m.against.sha.startsWith(m.against.ref) ? m.against.sha.slice(0, 7) : `${m.against.ref} = ${m.against.sha.slice(0, 7)}`} (built in test/bench/out/ref-${m.against.sha.slice(0, 12)}…)` : '; no ref (run with --against REF for the ref columns)'}.`);
  const notes = SCENARIO_NAMES.map((n) => results.scenarios[n]?.note).filter(Boolean);
  if (notes.length > 0) lines.push(`Ref coverage: ${notes.join(' ')}`);
  lines.push(`Runs: ${runs.join('; ')}.`);
  return `${lines.join('\n')}\n`;
}

let opts;
let nodes;
let ref;
try {
  opts = parseArgs(process.argv.slice(2));
  if (opts.against !== undefined) {
    const sha = resolveRef(opts.against);
    ref = { ref: opts.against, sha, client: refClient(sha, buildRef(sha)) };
  }
  nodes = resolveNodes(opts.nodes);
} catch (err) {
  if (!(err instanceof UsageError)) throw err;
  process.stderr.write(`bench: ${err.message}\n${USAGE}\n`);
  process.exit(2);
}
if (!existsSync(fileURLToPath(new URL('../../dist/main.js', import.meta.url)))) throw new Error('dist/ is missing: run `npm run build` (npm run bench does)');
const previous = existsSync(JSON_PATH) ? JSON.parse(readFileSync(JSON_PATH, 'utf8')) : { scenarios: {} };
const rev = revision();
const results = {
  machine: {
    node: process.version,
    nodes: nodes.map((n) => n.version),
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model.trim(),
    loadavg: loadavg().map((v) => Math.round(v * 100) / 100),
    revision: rev,
    against: ref ? { ref: ref.ref, sha: ref.sha } : undefined,
  },
  // --only keeps the other scenarios' last figures; each scenario carries the time it ran and what against.
  scenarios: previous.scenarios ?? {},
};
const clients = ref ? [SELF, ref.client] : [SELF];
let failed = false;
const began = Date.now();
for (const name of opts.only) {
  const started = Date.now();
  log(`${name}…`);
  const load = loadavg().map((v) => Math.round(v * 100) / 100);
  try {
    const { data, rows, note } = await SCENARIOS[name]({ quick: opts.quick, nodes, clients, ref: ref?.client });
    results.scenarios[name] = {
      at: new Date().toISOString().slice(0, 16).replace('T', ' '),
      revision: rev,
      against: ref ? ref.sha.slice(0, 7) : null,
      quick: opts.quick,
      loadavg: load,
      seconds: Math.round((Date.now() - started) / 1000),
      note: ref ? note : undefined,
      data,
      rows,
    };
    log(`${name} done in ${Math.round((Date.now() - started) / 1000)} s`);
  } catch (err) {
    failed = true;
    log(`${name} FAILED: ${err.stack ?? err}`);
  }
}
log(`all done in ${Math.round((Date.now() - began) / 1000)} s`);
writeFileSync(JSON_PATH, `${JSON.stringify(results, null, 2)}\n`);
const md = markdown(results);
writeFileSync(MD_PATH, md);
process.stdout.write(md);
process.exitCode = failed ? 1 : 0;
