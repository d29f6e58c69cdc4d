// Webhook listener benchmark: deliveries a second and p99 time to the 200 with 32
// concurrent senders, for `cardboard webhook listen --json` (verify only, then verify + --record, then verify +
// --record + --forward-to an app, a bare node:http server of its own, then verify + --mirror, each delivery a
// card of its own) beside a bare node:http server that answers 200, all in the same run on the same machine. The listener's stdout
// is piped into `cat`, as a user's `| jq` would read it. Also reports the server's CPU time per delivery
// (Linux /proc; null elsewhere): steadier than the rate on a shared machine. Needs a build (npm run build).
// With --ref PATH (another build's bin/cardboard.js) its listener is measured too, each configuration beside
// ours; --reverse takes the targets in the opposite order (the bench alternates it between rounds).
// Usage: node test/bench/webhook.mjs [seconds per target, default 10] [--json] [--ref PATH] [--reverse]
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

const BIN = fileURLToPath(new URL('../../bin/cardboard.js', import.meta.url));
const seconds = Number(process.argv.find((a) => /^\d+$/.test(a)) ?? 10);
const asJson = process.argv.includes('--json');
const refAt = process.argv.indexOf('--ref');
const REF_BIN = refAt === -1 ? undefined : process.argv[refAt + 1];
const reverse = process.argv.includes('--reverse');
const KEY = 'sk-bench-0123456789abcdef';
// A card as the service sends it (spec 6: a card's fields and its _id), 322 bytes.
const BODY = JSON.stringify({
  _id: '65a1f0c2e4b0a1b2c3d4e5f6',
  Name: 'Fix login redirect loop on the SSO callback',
  Status: 'In Progress',
  Owner: 'Alice Martin',
  Priority: 'High',
  Due: '2024-06-14',
  Tags: ['auth', 'web'],
  Description: 'Users coming back from the identity provider land on /login again instead of their board; seen on Safari 17 only.',
});
const BARE = `require('node:http').createServer((q, s) => { q.resume(); q.on('end', () => s.end('OK')); })
  .listen(0, '127.0.0.1', function () { console.error('Listening on http://127.0.0.1:' + this.address().port + '/'); });`;

/** Start a server process, its stdout read by `cat`; resolve with its URL once it prints "Listening on <url>". */
function start(args, env = {}) {
  const sink = spawn('cat', [], { stdio: ['pipe', 'ignore', 'inherit'] });
  const child = spawn(process.execPath, args, { env: { ...process.env, ...env, CI: '1', NO_COLOR: '1' }, stdio: ['ignore', sink.stdin, 'pipe'] });
  sink.stdin.destroy(); // the server holds the pipe now; cat ends when the server exits
  return new Promise((resolve, reject) => {
    let err = '';
    child.stderr.on('data', (b) => {
      err += b;
      const m = /Listening on (\S+)/.exec(err);
      if (m) resolve({ url: m[1], child });
    });
    child.on('exit', (code) => reject(new Error(`server exited (${code}): ${err}`)));
  });
}

async function stop(child) {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

// The same card with `[<id>]` as its id, which autocannon replaces by a new id in each request: every
// delivery to the mirror is a card it did not hold (an insert, the costlier write), none merged into one row.
const NEW_CARD_BODY = BODY.replace('65a1f0c2e4b0a1b2c3d4e5f6', '[<id>]');

function cannon(url, duration, body = BODY) {
  return autocannon({
    url,
    method: 'POST',
    connections: 32,
    duration,
    headers: { 'content-type': 'application/json', 'x-signingKey': KEY },
    body,
    idReplacement: body !== BODY,
  });
}

/** CPU time (user + system, µs) a process has used so far, or undefined where /proc is missing. */
function cpuMicros(pid) {
  const file = `/proc/${pid}/stat`;
  if (!existsSync(file)) return undefined;
  const stat = readFileSync(file, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / 100; // clock ticks of 10 ms (USER_HZ)
}

async function measure(name, args, env, body) {
  const { url, child } = await start(args, env);
  try {
    await cannon(url, 1, body); // warm-up: JIT, connections
    const before = cpuMicros(child.pid);
    const r = await cannon(url, seconds, body);
    const after = cpuMicros(child.pid);
    const cpuUsPerDelivery = before === undefined || after === undefined ? null : Math.round((after - before) / r.requests.total);
    return { name, deliveriesPerSec: Math.round(r.requests.average), p50Ms: r.latency.p50, p99Ms: r.latency.p99, cpuUsPerDelivery, total: r.requests.total, non2xx: r.non2xx, errors: r.errors + r.timeouts };
  } finally {
    await stop(child);
  }
}

const dir = mkdtempSync(join(tmpdir(), 'cardboard-bench-'));
const record = join(dir, 'bench.jsonl');
const env = { CARDBOARD_SIGNING_KEY: KEY, CARDBOARD_CONFIG_DIR: dir };
// --mirror needs a board; nothing is asked of its server (a port nothing listens on).
const mirrorEnv = (file) => ({ ...env, CARDBOARD_BOARD: 'b-bench', CARDBOARD_BASE_URL: 'http://127.0.0.1:9', CARDBOARD_MIRROR: join(dir, file) });
// The app `--forward-to` sends to: a bare server of its own (each forward try and its answer, one at a time,
// beside the deliveries coming in; what is not forwarded yet is read back from the record file).
const app = await start(['-e', BARE]);
const targets = [
  ['bare node:http (200 only)', ['-e', BARE], {}],
  ['webhook listen (verify)', [BIN, 'webhook', 'listen', '--port', '0', '--json'], env],
  ...(REF_BIN ? [['ref webhook listen (verify)', [REF_BIN, 'webhook', 'listen', '--port', '0', '--json'], env]] : []),
  ['webhook listen --record', [BIN, 'webhook', 'listen', '--port', '0', '--json', '--record', record], env],
  ...(REF_BIN ? [['ref webhook listen --record', [REF_BIN, 'webhook', 'listen', '--port', '0', '--json', '--record', join(dir, 'ref.jsonl')], env]] : []),
  ['webhook listen --forward-to', [BIN, 'webhook', 'listen', '--port', '0', '--json', '--record', join(dir, 'forward.jsonl'), '--forward-to', app.url], env],
  ...(REF_BIN ? [['ref webhook listen --forward-to', [REF_BIN, 'webhook', 'listen', '--port', '0', '--json', '--record', join(dir, 'ref-forward.jsonl'), '--forward-to', app.url], env]] : []),
  ['webhook listen --mirror', [BIN, 'webhook', 'listen', '--port', '0', '--json', '--mirror'], mirrorEnv('bench.db'), NEW_CARD_BODY],
];
if (reverse) targets.reverse();
const rows = [];
for (const [name, args, targetEnv, body] of targets) rows.push(await measure(name, args, targetEnv, body));
await stop(app.child);
const recordBytes = statSync(record).size;
rmSync(dir, { recursive: true, force: true });
const meta = { node: process.version, connections: 32, seconds, bodyBytes: Buffer.byteLength(BODY), recordBytes };
if (asJson) {
  console.log(JSON.stringify({ ...meta, rows }, null, 2));
} else {
  console.log(`node ${meta.node}, 32 connections, ${seconds} s per target, ${meta.bodyBytes}-byte card body`);
  console.log('target                       deliveries/s   p50 ms   p99 ms  CPU µs/delivery  non-2xx  errors');
  for (const r of rows) {
    console.log(`${r.name.padEnd(28)} ${String(r.deliveriesPerSec).padStart(12)} ${String(r.p50Ms).padStart(8)} ${String(r.p99Ms).padStart(8)} ${String(r.cpuUsPerDelivery ?? '-').padStart(16)} ${String(r.non2xx).padStart(8)} ${String(r.errors).padStart(7)}`);
  }
}
