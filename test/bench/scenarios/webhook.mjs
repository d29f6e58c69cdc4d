// `webhook listen` with 32 concurrent senders beside a bare node:http server answering 200, with the signing key
// checked, then with --record too, then with --forward-to an app as well (each try's answer appended to the
// record); and `listen --mirror` (each delivery a new card) beside `listen --record`. test/bench/webhook.mjs does one round (bare, listen, listen --record, and the
// ref's listener beside each with --against; autocannon, 32 connections); this runs it several times, the order
// of the targets reversed every other round, and keeps the median of each figure and of each round's ratio.
import { fileURLToPath } from 'node:url';
import { log, runMeasured } from '../lib/proc.mjs';
import { figure, median, num, pairedRatio, ratioText, sig } from '../lib/stats.mjs';

const SCRIPT = fileURLToPath(new URL('../webhook.mjs', import.meta.url));
const GOAL = 0.8;
const P99_MS = 10;
/** `listen --mirror` beside `listen --record`: deliveries a second. */
const MIRROR_GOAL = 0.8;

/** Run the webhook scenario. */
export async function webhook({ quick, ref }) {
  const runs = quick ? 1 : 3;
  const seconds = quick ? 2 : 5;
  const rounds = [];
  for (let i = 0; i < runs; i++) {
    log(`webhook listen vs bare node:http${ref ? ` and ${ref.label}` : ''}, round ${i + 1}/${runs} (${seconds} s each)`);
    const args = [SCRIPT, String(seconds), '--json', ...(ref ? ['--ref', ref.bin] : []), ...(i % 2 ? ['--reverse'] : [])];
    const r = await runMeasured(process.execPath, args);
    if (r.code !== 0) throw new Error(`webhook.mjs exited ${r.code}: ${r.stderr.slice(-1000)}`);
    rounds.push(JSON.parse(r.stdout));
  }
  const pick = (prefix) => {
    const all = rounds.map((round) => round.rows.find((row) => row.name.startsWith(prefix)));
    const failures = all.reduce((n, row) => n + row.non2xx + row.errors, 0);
    if (failures > 0) throw new Error(`${prefix}: ${failures} non-2xx answers or errors`);
    const cpu = all.every((row) => typeof row.cpuUsPerDelivery === 'number') ? all.map((row) => row.cpuUsPerDelivery) : undefined;
    return { rates: all.map((row) => row.deliveriesPerSec), perSec: median(all.map((row) => row.deliveriesPerSec)), p99: median(all.map((row) => row.p99Ms)), cpu, cpuUs: cpu && sig(median(cpu)) };
  };
  const bare = pick('bare');
  const listen = pick('webhook listen (verify)');
  const record = pick('webhook listen --record');
  const forward = pick('webhook listen --forward-to');
  const mirror = pick('webhook listen --mirror');
  const refListen = ref ? pick('ref webhook listen (verify)') : undefined;
  const refRecord = ref ? pick('ref webhook listen --record') : undefined;
  const refForward = ref ? pick('ref webhook listen --forward-to') : undefined;
  const strip = ({ rates, cpu, ...m }) => ({ ...m, samples: rates, cpuSamples: cpu });
  const data = { runs, secondsEach: seconds, connections: 32, bare: strip(bare), listen: strip(listen), record: strip(record), forward: strip(forward), mirror: strip(mirror), ref: ref && { label: ref.label, listen: strip(refListen), record: strip(refRecord), forward: strip(refForward) } };
  const text = (m) => `${figure(m.rates, 'deliveries/s')}, p99 ${num(m.p99)} ms${m.cpu ? `, ${figure(m.cpu, 'µs CPU/delivery')}` : ''}`;
  const row = (label, m, theirs) => {
    const ratio = pairedRatio(m.rates, bare.rates);
    const r = {
      scenario: label,
      cardboard: text(m),
      beside: `bare node:http: ${text(bare)}`,
      ratio: sig(ratio.median),
      ratioText: ratioText(ratio),
      goal: `≥ ${GOAL}×, p99 ≤ ${P99_MS} ms`,
      met: ratio.median >= GOAL && m.p99 <= P99_MS,
    };
    if (theirs) {
      r.ref = `${ref.short}: ${text(theirs)}, ${ratioText(pairedRatio(theirs.rates, bare.rates))} bare`;
      r.vsRef = `${ratioText(pairedRatio(m.rates, theirs.rates))} deliveries/s`;
    }
    return r;
  };
  const mirrorRatio = pairedRatio(mirror.rates, record.rates);
  const mirrorRow = {
    scenario: '`webhook listen --json --mirror`, 32 senders, each delivery a new card',
    cardboard: text(mirror),
    beside: `\`listen --record\`: ${text(record)}`,
    ratio: sig(mirrorRatio.median),
    ratioText: ratioText(mirrorRatio),
    goal: `≥ ${MIRROR_GOAL}× \`listen --record\``,
    met: mirrorRatio.median >= MIRROR_GOAL,
  };
  return {
    data,
    rows: [row('`webhook listen --json`, 32 senders, key checked', listen, refListen), row('`webhook listen --json --record F`, 32 senders, key checked', record, refRecord),
      row('`webhook listen --json --record F --forward-to APP`, 32 senders, key checked', forward, refForward),
      mirrorRow,
    ],
    note: ref ? 'webhook: the ref in every round.' : undefined,
  };
}
