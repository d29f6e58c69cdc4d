// Peak memory of `webhook listen` for one large delivery (a 100 MB body once cost 1,156 MB RSS).
// For each body size and each configuration it starts the built listener with --max-body 200mb, reads its
// VmHWM (peak RSS, Linux /proc) once it is ready, POSTs one JSON card of that size, waits for the 200, the
// printed line and (with --forward-to) the app's receipt, then reads VmHWM again. The cost is the difference,
// shown as a multiple of the body size. Needs a build (npm run build) and Linux.
// Usage: node test/bench/webhook-memory.mjs [sizes in MB, default 10,100] [--json] [--bin PATH (another build's
// bin/cardboard.js; default this tree's)] [--deadline S (a delivery not done after S seconds: the listener is killed
// and the row says so, with the peak it had reached; an older build may take minutes over a 100 MB body)]
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const binAt = process.argv.indexOf('--bin');
const BIN = binAt === -1 ? fileURLToPath(new URL('../../bin/cardboard.js', import.meta.url)) : process.argv[binAt + 1];
const asJson = process.argv.includes('--json');
const sizes = (process.argv.slice(2).find((a) => /^[\d,]+$/.test(a)) ?? '10,100').split(',').map(Number);
const deadlineAt = process.argv.indexOf('--deadline');
const DEADLINE_MS = deadlineAt === -1 ? undefined : Number(process.argv[deadlineAt + 1]) * 1000;
const KEY = 'sk-bench-memory-0123456789';

function vmHwmKb(pid) {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m[1]);
}

/** A JSON card of exactly `bytes` bytes: the service's shape with one long text field. */
function card(bytes) {
  const head = '{"_id":"65a1f0c2e4b0a1b2c3d4e5f6","Name":"Big","Description":"';
  const tail = '"}';
  return Buffer.from(head + 'lorem ipsum '.repeat(Math.ceil(bytes / 12)).slice(0, bytes - head.length - tail.length) + tail);
}

/** A stand-in app that reads and drops each body; resolves `got` on each receipt. */
async function sinkApp() {
  let got = 0;
  let waiter;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      got++;
      res.end('ok');
      waiter?.();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/hooks`,
    until: async (n) => {
      while (got < n) await new Promise((resolve) => (waiter = resolve));
    },
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

function post(url, body) {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-signingKey': KEY, 'content-length': body.length } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function measure(name, extraArgs, bytes, dir) {
  const app = extraArgs.includes('FORWARD') ? await sinkApp() : undefined;
  const args = extraArgs.map((a) => (a === 'FORWARD' ? app.url : a === 'RECORD' ? join(dir, `r-${name.length}-${bytes}.jsonl`) : a));
  const child = spawn(process.execPath, [BIN, 'webhook', 'listen', '--port', '0', '--max-body', '200mb', '--json', ...args], {
    env: { ...process.env, CARDBOARD_SIGNING_KEY: KEY, CARDBOARD_CONFIG_DIR: dir, CI: '1', NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  let newlines = 0;
  let lineWaiter;
  child.stdout.on('data', (b) => {
    for (const c of b) if (c === 0x0a) newlines++;
    lineWaiter?.();
  });
  const url = await new Promise((resolve, reject) => {
    child.stderr.on('data', (b) => {
      err += b;
      const m = /Listening on (\S+)/.exec(err);
      if (m) resolve(m[1]);
    });
    child.on('exit', (code) => reject(new Error(`listener exited (${code}): ${err}`)));
  });
  let timer;
  let timedOut = false;
  try {
    const before = vmHwmKb(child.pid);
    const body = card(bytes);
    const delivered = (async () => {
      const status = await post(url, body);
      if (status !== 200) throw new Error(`${name}: answered ${status}`);
      while (newlines < 1) await new Promise((resolve) => (lineWaiter = resolve));
      await app?.until(1);
    })();
    if (DEADLINE_MS !== undefined) {
      const late = new Promise((resolve) => (timer = setTimeout(() => resolve('late'), DEADLINE_MS)));
      if ((await Promise.race([delivered, late])) === 'late') {
        timedOut = true;
        delivered.catch(() => {}); // the listener is killed below; its socket error is expected
        const peak = vmHwmKb(child.pid);
        return { name, bodyMb: bytes / 1e6, idleMb: Math.round(before / 1024), peakMb: Math.round(peak / 1024), timedOutAfterS: DEADLINE_MS / 1000 };
      }
    } else await delivered;
    const after = vmHwmKb(child.pid);
    return { name, bodyMb: bytes / 1e6, idleMb: Math.round(before / 1024), peakMb: Math.round(after / 1024), costMb: Math.round((after - before) / 1024), times: Math.round(((after - before) * 1024 * 10) / bytes) / 10 };
  } finally {
    clearTimeout(timer);
    // A listener busy in a synchronous loop never hears SIGTERM.
    child.kill(timedOut ? 'SIGKILL' : 'SIGTERM');
    await new Promise((resolve) => child.once('close', resolve));
    await app?.close();
  }
}

const dir = mkdtempSync(join(tmpdir(), 'cardboard-bench-mem-'));
const configs = [
  ['listen --json', []],
  ['listen --json --record', ['--record', 'RECORD']],
  ['listen --json --record --forward-to', ['--record', 'RECORD', '--forward-to', 'FORWARD']],
];
const rows = [];
try {
  for (const mb of sizes) for (const [name, args] of configs) rows.push(await measure(name, args, mb * 1e6, dir));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
if (asJson) {
  console.log(JSON.stringify({ node: process.version, rows }, null, 2));
} else {
  console.log(`node ${process.version}; peak RSS (VmHWM) of webhook listen around one delivery`);
  console.log('configuration                          body MB  idle MB  peak MB  cost MB  cost/body');
  for (const r of rows) {
    const cost = r.timedOutAfterS === undefined ? `${String(r.costMb).padStart(8)} ${String(r.times).padStart(9)}×` : `not done after ${r.timedOutAfterS} s`;
    console.log(`${r.name.padEnd(38)} ${String(r.bodyMb).padStart(7)} ${String(r.idleMb).padStart(8)} ${String(r.peakMb).padStart(8)} ${cost}`);
  }
}
