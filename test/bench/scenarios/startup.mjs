// Start-up: `cardboard --version` and `--help` beside `node -e 0`, spawned in turns so that noise on the
// shared machine falls on all three alike; the median wall time of each.
import { BIN, median, runMeasured, sig } from '../lib/proc.mjs';

const GOAL = 1.5;

/** Run the start-up scenario; `spawns` runs of each command. */
export async function startup({ quick }) {
  const spawns = quick ? 5 : 15;
  const commands = {
    node: [process.execPath, ['-e', '0']],
    version: [process.execPath, [BIN, '--version']],
    help: [process.execPath, [BIN, '--help']],
  };
  const times = { node: [], version: [], help: [] };
  const names = Object.keys(commands);
  for (let i = 0; i < spawns + 1; i++) {
    // Rotate the order each round; the first round only warms the disk cache and is not kept.
    for (let k = 0; k < names.length; k++) {
      const name = names[(i + k) % names.length];
      const [cmd, args] = commands[name];
      const r = await runMeasured(cmd, args);
      if (r.code !== 0) throw new Error(`${name} exited ${r.code}: ${r.stderr}`);
      if (i > 0) times[name].push(r.ms);
    }
  }
  const node = median(times.node);
  const data = { spawns, medianMs: { node: sig(node), version: sig(median(times.version)), help: sig(median(times.help)) }, allMs: times };
  const row = (flag, ms) => ({
    scenario: `start-up: \`cardboard ${flag}\``,
    cardboard: `${sig(ms)} ms`,
    beside: `\`node -e 0\`: ${sig(node)} ms`,
    ratio: sig(ms / node),
    ratioText: `${sig(ms / node)}×`,
    goal: `≤ ${GOAL}×`,
    met: ms / node <= GOAL,
  });
  return { data, rows: [row('--version', data.medianMs.version), row('--help', data.medianMs.help)] };
}
