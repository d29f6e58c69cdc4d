// CPU per POST of the three ways to send one request with undici 7, side by side in one process:
// dispatch() with the current controller handler (src/http/dispatch.ts, built), dispatch() with the
// deprecated onConnect/onHeaders/onData/onComplete handler (what dispatch.ts was before), and request().
// Each round posts N bench rows over 8 connections against the emulator (a child process, so its CPU is
// not counted), for each way in turn, the order rotating every round; the medians of CPU µs a request
// (process.cpuUsage) and of requests/s are printed.
// Usage: npm run build && node test/bench/peers/dispatch-handlers.mjs [requests=20000] [rounds=7]
import { setMaxListeners } from 'node:events';
import { Agent, request } from 'undici';
import { dispatchRequest } from '../../../dist/http/dispatch.js';
import { rowBody } from '../lib/csv.mjs';
import { BOARD, startEmulator, TOKEN } from '../lib/emulator.mjs';
import { median } from '../lib/proc.mjs';

const N = Number(process.argv[2] ?? 20_000);
const ROUNDS = Number(process.argv[3] ?? 7);
const CONNECTIONS = 8;
const TIMEOUT = 30_000;

/** The deprecated onConnect/onHeaders handler dispatch.ts used before, kept here only to compare against. */
function legacyDispatch(dispatcher, req) {
  return new Promise((resolve, reject) => {
    const { signal } = req;
    let statusCode = 0;
    const chunks = [];
    let onAbort;
    const done = () => onAbort && signal.removeEventListener('abort', onAbort);
    dispatcher.dispatch(
      { origin: req.origin, path: req.path, method: req.method, headers: req.headers, body: req.body, headersTimeout: req.headersTimeout, bodyTimeout: req.bodyTimeout },
      {
        onConnect(abort) {
          if (signal.aborted) return abort(signal.reason);
          onAbort = () => abort(signal.reason);
          signal.addEventListener('abort', onAbort, { once: true });
        },
        onHeaders(status, raw) {
          statusCode = status;
          const headers = {};
          for (let i = 0; i + 1 < raw.length; i += 2) {
            const key = raw[i].toString('latin1').toLowerCase();
            const value = raw[i + 1].toString('latin1');
            const prev = headers[key];
            headers[key] = prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value];
          }
          return true;
        },
        onData(chunk) {
          chunks.push(chunk);
          return true;
        },
        onComplete() {
          done();
          resolve({ statusCode, body: chunks.length === 1 ? chunks[0] : Buffer.concat(chunks) });
        },
        onError(err) {
          done();
          reject(err);
        },
      },
    );
  });
}

async function viaRequest(dispatcher, req) {
  const res = await request(req.origin + req.path, {
    dispatcher,
    method: req.method,
    headers: req.headers,
    body: req.body,
    headersTimeout: req.headersTimeout,
    bodyTimeout: req.bodyTimeout,
    signal: req.signal,
  });
  return { statusCode: res.statusCode, headers: res.headers, body: Buffer.from(await res.body.arrayBuffer()) };
}

const WAYS = { controller: dispatchRequest, legacy: legacyDispatch, request: viaRequest };

async function round(way, origin) {
  const dispatcher = new Agent({ keepAliveTimeout: 10_000, connections: CONNECTIONS });
  const signal = new AbortController().signal;
  // request() holds its abort listener until the body is consumed, so more than 10 overlap.
  setMaxListeners(64, signal);
  const send = WAYS[way];
  let next = 0;
  const worker = async () => {
    while (next < N) {
      const i = next++;
      const res = await send(dispatcher, {
        origin,
        path: `/api/aptlet/${BOARD}`,
        method: 'POST',
        headers: { 'x-token': TOKEN, 'user-agent': 'bench', accept: 'application/json', 'content-type': 'application/json' },
        body: rowBody(i),
        headersTimeout: TIMEOUT,
        bodyTimeout: TIMEOUT,
        signal,
      });
      if (res.statusCode !== 200) throw new Error(`${way}: HTTP ${res.statusCode}`);
      JSON.parse(res.body.toString());
    }
  };
  const started = performance.now();
  const cpu = process.cpuUsage();
  await Promise.all(Array.from({ length: CONNECTIONS }, worker));
  const used = process.cpuUsage(cpu);
  const ms = performance.now() - started;
  await dispatcher.close();
  return { cpuUs: (used.user + used.system) / N, perSec: N / (ms / 1000) };
}

const emu = await startEmulator();
const origin = new URL(emu.url).origin;
const names = Object.keys(WAYS);
const results = Object.fromEntries(names.map((n) => [n, []]));
try {
  for (const n of names) await round(n, origin); // warm-up: JIT and connections, not counted
  for (let r = 0; r < ROUNDS; r++) {
    const order = names.map((_, i) => names[(i + r) % names.length]);
    for (const n of order) results[n].push(await round(n, origin));
  }
} finally {
  await emu.close();
}
console.log(`${N} POSTs x ${ROUNDS} rounds, ${CONNECTIONS} connections, Node ${process.versions.node}`);
for (const n of names) {
  const cpu = results[n].map((x) => x.cpuUs);
  const rate = results[n].map((x) => x.perSec);
  console.log(
    `${n.padEnd(10)} CPU ${median(cpu).toFixed(1)} µs/request (min ${Math.min(...cpu).toFixed(1)}, max ${Math.max(...cpu).toFixed(1)}), ${Math.round(median(rate))} requests/s`,
  );
}
