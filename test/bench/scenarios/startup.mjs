// Start-up: `cardboard --version` and `--help` (and the ref's, with --against) beside `node -e 0`, on each Node
// line measured. The commands take turns in rounds whose order alternates (ABBA…), so noise on the shared machine
// falls on all of them alike; the first round only warms the disk cache. Ratios are paired: each round's time
// over that round's `node -e 0`, then the median of those.
import { log, runMeasured } from '../lib/proc.mjs';
import { abbaOrder, figure, median, notIn, pairedRatio, ratioText, sig } from '../lib/stats.mjs';

const GOAL = 1.3;
const FLAGS = ['--version', '--help'];

/** Run the start-up scenario on every Node of `nodes`, for every client of `clients`. */
export async function startup({ quick, nodes, clients, ref }) {
  const spawns = quick ? 5 : 20;
  const data = [];
  const rows = [];
  for (const { path: node, version } of nodes) {
    const commands = [{ key: 'node', args: ['-e', '0'] }];
    for (const c of clients) for (const flag of FLAGS) commands.push({ key: `${c.label} ${flag}`, client: c, flag, args: [c.bin, flag] });
    const times = Object.fromEntries(commands.map((c) => [c.key, []]));
    const missing = new Set();
    log(`start-up on node ${version}: ${spawns} rounds of ${commands.length} commands`);
    for (let i = 0; i < spawns + 1; i++) {
      for (const cmd of abbaOrder(commands, i)) {
        if (missing.has(cmd.key)) continue;
        const r = await runMeasured(node, cmd.args);
        if (r.code === 2 && cmd.client?.isRef) {
          missing.add(cmd.key);
          continue;
        }
        if (r.code !== 0) throw new Error(`${cmd.key} on node ${version} exited ${r.code}: ${r.stderr}`);
        if (i > 0) times[cmd.key].push(r.ms);
      }
    }
    data.push({ node: version, spawns, medianMs: Object.fromEntries(Object.entries(times).map(([k, v]) => [k, v.length ? sig(median(v)) : null])), allMs: times });
    for (const flag of FLAGS) {
      const mine = times[`cardboard ${flag}`];
      const vsNode = pairedRatio(mine, times.node);
      const row = {
        scenario: `start-up: \`cardboard ${flag}\`, Node ${version}`,
        cardboard: figure(mine, 'ms'),
        beside: `\`node -e 0\`: ${figure(times.node, 'ms')}`,
        ratio: sig(vsNode.median),
        ratioText: ratioText(vsNode),
        goal: `≤ ${GOAL}×`,
        met: vsNode.median <= GOAL,
      };
      if (ref) {
        const key = `${ref.label} ${flag}`;
        if (missing.has(key)) row.ref = row.vsRef = notIn(ref.short);
        else {
          row.ref = `${ref.short}: ${figure(times[key], 'ms')}, ${ratioText(pairedRatio(times[key], times.node))} \`node -e 0\``;
          row.vsRef = ratioText(pairedRatio(mine, times[key]));
        }
      }
      rows.push(row);
    }
  }
  return { data, rows, note: ref ? 'startup: the ref on every Node line, in every round.' : undefined };
}
