// `webhook listen` with 32 concurrent senders beside a bare node:http server answering 200. The webhook
// helper's test/bench/webhook.mjs does one round (bare, listen, listen --record; autocannon, 32 connections);
// this runs it several times and keeps the median of each figure.
import { fileURLToPath } from 'node:url';
import { log, median, runMeasured, sig } from '../lib/proc.mjs';

const SCRIPT = fileURLToPath(new URL('../webhook.mjs', import.meta.url));
const GOAL = 0.8;
const P99_MS = 10;

/** Run the webhook scenario. */
export async function webhook({ quick }) {
  const runs = quick ? 1 : 3;
  const seconds = quick ? 2 : 5;
  const rounds = [];
  for (let i = 0; i < runs; i++) {
    log(`webhook listen vs bare node:http, round ${i + 1}/${runs} (${seconds} s each)`);
    const r = await runMeasured(process.execPath, [SCRIPT, String(seconds), '--json']);
    if (r.code !== 0) throw new Error(`webhook.mjs exited ${r.code}: ${r.stderr.slice(-1000)}`);
    rounds.push(JSON.parse(r.stdout));
  }
  const pick = (prefix) => {
    const all = rounds.map((round) => round.rows.find((row) => row.name.startsWith(prefix)));
    const failures = all.reduce((n, row) => n + row.non2xx + row.errors, 0);
    if (failures > 0) throw new Error(`${prefix}: ${failures} non-2xx answers or errors`);
    const cpu = all.every((row) => typeof row.cpuUsPerDelivery === 'number') ? sig(median(all.map((row) => row.cpuUsPerDelivery))) : undefined;
    return { perSec: median(all.map((row) => row.deliveriesPerSec)), p99: median(all.map((row) => row.p99Ms)), cpuUs: cpu };
  };
  const bare = pick('bare');
  const listen = pick('webhook listen (verify)');
  const record = pick('webhook listen --record');
  const data = { runs, secondsEach: seconds, connections: 32, bare, listen, record };
  const cpuText = (m) => (m.cpuUs === undefined ? '' : `, ${m.cpuUs} µs CPU/delivery`);
  const row = (label, m) => {
    const ratio = m.perSec / bare.perSec;
    return {
      scenario: label,
      cardboard: `${sig(m.perSec)} deliveries/s, p99 ${m.p99} ms${cpuText(m)}`,
      beside: `bare node:http: ${sig(bare.perSec)}/s, p99 ${bare.p99} ms${cpuText(bare)}`,
      ratio: sig(ratio),
      ratioText: `${sig(ratio)}×`,
      goal: `≥ ${GOAL}×, p99 ≤ ${P99_MS} ms`,
      met: ratio >= GOAL && m.p99 <= P99_MS,
    };
  };
  return {
    data,
    rows: [row('`webhook listen --json`, 32 senders', listen), row('`webhook listen --json --record F`, 32 senders', record)],
  };
}
