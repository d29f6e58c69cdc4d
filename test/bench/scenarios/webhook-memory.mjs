// Peak memory of `webhook listen` around one large delivery (issue 11 §8: a 100 MB body cost 1,156 MB of
// RSS, 11x): test/bench/webhook-memory.mjs measures VmHWM before and after; the goal is about 2x the body.
import { fileURLToPath } from 'node:url';
import { log, runMeasured } from '../lib/proc.mjs';

const SCRIPT = fileURLToPath(new URL('../webhook-memory.mjs', import.meta.url));
const GOAL = 2.5;

/** Run the webhook-memory scenario (Linux only: it reads /proc). */
export async function webhookMemory({ quick }) {
  const sizes = quick ? '10' : '10,100';
  log(`webhook listen peak RSS for one delivery of ${sizes} MB`);
  const r = await runMeasured(process.execPath, [SCRIPT, sizes, '--json']);
  if (r.code !== 0) throw new Error(`webhook-memory.mjs exited ${r.code}: ${r.stderr.slice(-1000)}`);
  const data = JSON.parse(r.stdout);
  return {
    data,
    rows: data.rows.map((row) => ({
      scenario: `\`webhook ${row.name}\`, one ${row.bodyMb} MB body`,
      cardboard: `${row.costMb} MB over idle (peak ${row.peakMb} MB)`,
      beside: `body ${row.bodyMb} MB`,
      ratio: row.times,
      ratioText: `${row.times}×`,
      goal: `≤ ${GOAL}× the body`,
      met: row.times <= GOAL,
    })),
  };
}
