// Peak memory of `webhook listen` around one large delivery (a 100 MB body once cost 1,156 MB of RSS, 11x):
// test/bench/webhook-memory.mjs measures VmHWM before and after; the goal is about 2x the body. With --against,
// the ref's listener is measured the same way after ours (a peak of memory is not a figure noise moves).
import { fileURLToPath } from 'node:url';
import { log, runMeasured } from '../lib/proc.mjs';
import { notIn } from '../lib/stats.mjs';

const SCRIPT = fileURLToPath(new URL('../webhook-memory.mjs', import.meta.url));
const GOAL = 2.5;

/** How long the ref may take over one delivery (e008ef5 spent more than 5 minutes of CPU on a 100 MB body). */
const REF_DEADLINE_S = 60;

async function measure(sizes, bin) {
  const r = await runMeasured(process.execPath, [SCRIPT, sizes, '--json', ...(bin ? ['--bin', bin, '--deadline', String(REF_DEADLINE_S)] : [])]);
  if (r.code !== 0) return { failed: `webhook-memory.mjs exited ${r.code}: ${r.stderr.slice(-1000)}` };
  return JSON.parse(r.stdout);
}

/** Run the webhook-memory scenario (Linux only: it reads /proc). */
export async function webhookMemory({ quick, ref }) {
  const sizes = quick ? '10' : '10,100';
  log(`webhook listen peak RSS for one delivery of ${sizes} MB`);
  const data = await measure(sizes);
  if (data.failed) throw new Error(data.failed);
  let theirs;
  if (ref) {
    log(`${ref.label}: webhook listen peak RSS for one delivery of ${sizes} MB`);
    theirs = await measure(sizes, ref.bin);
    // An older listener without a flag used here (exit 2 before listening) has no figure, and that is not a failure.
    if (theirs.failed && !/exited \(2\)/.test(theirs.failed)) throw new Error(`${ref.label}: ${theirs.failed}`);
    data.ref = { label: ref.label, ...theirs };
  }
  return {
    data,
    rows: data.rows.map((row) => {
      const r = {
        scenario: `\`webhook ${row.name}\`, one ${row.bodyMb} MB body`,
        cardboard: `${row.costMb} MB over idle (peak ${row.peakMb} MB)`,
        beside: `body ${row.bodyMb} MB`,
        ratio: row.times,
        ratioText: `${row.times}×`,
        goal: `≤ ${GOAL}× the body`,
        met: row.times <= GOAL,
      };
      if (theirs) {
        const same = theirs.rows?.find((t) => t.name === row.name && t.bodyMb === row.bodyMb);
        if (!same) r.ref = r.vsRef = notIn(ref.short);
        else if (same.timedOutAfterS !== undefined) {
          r.ref = `${ref.short}: not done after ${same.timedOutAfterS} s (killed at a peak of ${same.peakMb} MB)`;
          r.vsRef = '—';
        } else {
          r.ref = `${ref.short}: ${same.costMb} MB over idle (peak ${same.peakMb} MB), ${same.times}× the body`;
          r.vsRef = same.costMb > 0 ? `${Math.round((row.costMb / same.costMb) * 100) / 100}× the cost` : '—';
        }
      }
      return r;
    }),
    note: ref ? 'webhook-memory: the ref after ours.' : undefined,
  };
}
