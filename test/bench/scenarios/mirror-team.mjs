// A team's mirror: the mirror on PostgreSQL beside the same mirror on SQLite, in one run.
// 1. Ten readers, each looping `card list --where … --mirror`, while one `webhook listen --json --mirror` is sent
//    500 signed deliveries a second (autocannon's overall rate, each delivery a new card) for a fixed time: the
//    reader runs and their errors (a run that fails or prints fewer cards than the mirror held at the start),
//    the deliveries acknowledged (200) against the cards the mirror gained (`mirror status --json` before and
//    after: none may be missing), and the rate the listener answered at; rounds in alternating order.
// 2. The listener alone as fast as it goes (32 senders, as the webhook scenario): deliveries a second and CPU
//    per delivery, the listener's and, for a cluster of our own, the server's; rounds in alternating order.
// 3. `card list --where … --mirror` over a mirror of 100,000 cards filled through the store (as a complete pull
//    leaves it), both engines printing the same cards: wall time, CPU and peak RSS of the CLI (the server's
//    memory is not in it).
// PostgreSQL: lib/postgres.mjs (CARDBOARD_TEST_PG, else a private cluster from Debian's binaries); without one,
// or when this build's mirror has no PostgreSQL store, the PostgreSQL half is skipped and its rows say why.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { BOARD, startEmulator } from '../lib/emulator.mjs';
import { fillMirror } from '../lib/mirror.mjs';
import { BIN, childEnv, log, runCli } from '../lib/proc.mjs';
import { startPostgres } from '../lib/postgres.mjs';
import { abbaOrder, figure, median, num, pairedRatio, ratioText, sig } from '../lib/stats.mjs';

const KEY = 'sk-bench-0123456789abcdef';
const READERS = 10;
const RATE = 500;
/**
 * Connections that share the fixed rate (autocannon spreads it over them, 10 a second each). Each waits for
 * its answer before the next send, so they are many: with the listener slowed by the readers, the rate
 * offered stays 500 a second until answers take over 100 ms.
 */
const RATE_CONNECTIONS = 50;
const BEST_CONNECTIONS = 32;
const SEED = 2_000;
const PAGE_SIZE = 50;
/** Cards a page when the 100,000-card mirrors are filled through the store (fewer round trips to the server). */
const FILL_PAGE = 1000;
/** The listener on PostgreSQL beside the one on SQLite: deliveries a second. */
const THROUGHPUT_GOAL = 0.7;
/** The 100,000-card `--where` on PostgreSQL beside the same on SQLite: time. */
const WHERE_GOAL = 3;
// The seeded cards: Status To do/Doing/Done, Owner Ada/Grace/Linus/Margaret in turn; about 1 in 12 match.
const WHERE = ['--where', 'Status=Doing', '--where', 'Owner~gr'];
// A delivery: a card of the service's shape with a new id in each request (autocannon's `[<id>]`): every
// delivery is an insert, none merged into another. Its Status does not match WHERE, so what readers print
// stays the seeded matches.
const DELIVERY = JSON.stringify({
  _id: '[<id>]',
  Name: 'Fix login redirect loop on the SSO callback',
  Status: 'In Progress',
  Owner: 'Alice Martin',
  Priority: 'High',
  Description: 'Users coming back from the identity provider land on /login again instead of their board; seen on Safari 17 only.',
});

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** CPU time (user + system, µs) a process has used so far, or undefined where /proc is missing. */
function cpuMicros(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(f[11]) + Number(f[12])) * 1e6) / 100;
  } catch {
    return undefined;
  }
}

/** `webhook listen --port 0 --json --mirror` with `env`, its stdout discarded; resolves with { url, child } once it listens. */
function startListener(env) {
  const child = spawn(process.execPath, [BIN, 'webhook', 'listen', '--port', '0', '--json', '--mirror'], { env: childEnv({ ...env, CARDBOARD_SIGNING_KEY: KEY }), stdio: ['ignore', 'ignore', 'pipe'] });
  return new Promise((resolve, reject) => {
    let err = '';
    const onExit = (code) => reject(new Error(`webhook listen --mirror exited (${code}): ${err.slice(-1000)}`));
    child.on('exit', onExit);
    child.stderr.on('data', (b) => {
      err += b;
      const m = /Listening on (\S+)/.exec(err);
      if (!m) return;
      child.stderr.removeAllListeners('data');
      child.stderr.resume();
      child.off('exit', onExit);
      resolve({ url: m[1], child });
    });
  });
}

async function stopListener(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

/** Deliveries to `url` for `seconds`: at `rate` a second over `connections`, or as fast as they go. */
function deliver(url, seconds, opts = {}) {
  return autocannon({
    url,
    method: 'POST',
    connections: opts.connections ?? BEST_CONNECTIONS,
    duration: seconds,
    ...(opts.rate ? { overallRate: opts.rate } : {}),
    headers: { 'content-type': 'application/json', 'x-signingKey': KEY },
    body: DELIVERY,
    idReplacement: true,
  });
}

/** The cards the mirror `env` selects holds, from `mirror status --json`. */
async function mirrorCards(env) {
  const r = await runCli(['mirror', 'status', '--json'], { env: childEnv(env) });
  return JSON.parse(r.stdout).cards;
}

/** One reader: `card list --where … --mirror` again and again until `until()` says stop; its runs and errors. */
async function reader(env, expected, until) {
  let runs = 0;
  const errors = [];
  while (!until()) {
    const r = await runCli(['card', 'list', ...WHERE, '--mirror', '--format', 'ndjson'], { env: childEnv(env), allowFailure: true });
    runs++;
    const lines = r.code === 0 ? r.stdout.split('\n').filter(Boolean).length : 0;
    if (r.code !== 0) errors.push(`exit ${r.code}: ${r.stderr.trim().split('\n')[0]}`);
    else if (lines < expected) errors.push(`printed ${lines} cards, not ${expected}`);
  }
  return { runs, errors };
}

/**
 * Part 1 on one engine, one round: ten readers of its mirror (filled) and a listener started for the round,
 * offered RATE deliveries a second for `seconds`. Returns the round's figures.
 */
async function underLoad(env, expected, seconds, serverCpu) {
  const before = await mirrorCards(env);
  const { url, child } = await startListener(env);
  try {
    let stop = false;
    const readers = Array.from({ length: READERS }, () => reader(env, expected, () => stop));
    await sleep(500); // the readers' first runs under way
    const cpu0 = cpuMicros(child.pid);
    const server0 = serverCpu?.();
    const r = await deliver(url, seconds, { rate: RATE, connections: RATE_CONNECTIONS });
    const cpu1 = cpuMicros(child.pid);
    const server1 = serverCpu?.();
    stop = true;
    const done = await Promise.all(readers);
    await stopListener(child);
    const acked = r['2xx'];
    const cards = await mirrorCards(env);
    const applied = cards - before;
    const errors = done.flatMap((d) => d.errors);
    return {
      seconds,
      sent: r.requests.sent,
      acked,
      refused: r.non2xx,
      failed: r.errors + r.timeouts,
      rows: applied,
      lost: Math.max(0, acked - applied),
      perSec: acked / seconds,
      p99Ms: r.latency.p99,
      cpuUsPerDelivery: cpu0 === undefined || cpu1 === undefined || acked === 0 ? null : sig((cpu1 - cpu0) / acked),
      // The server's CPU here is its readers' queries as well as the deliveries: in the data, not in the row.
      serverCpuUsPerDeliveryWithReaders: server0 === undefined || server1 === undefined || acked === 0 ? null : sig((server1 - server0) / acked),
      readerRuns: done.reduce((n, d) => n + d.runs, 0),
      readerErrors: errors.length,
      firstError: errors[0],
    };
  } finally {
    await stopListener(child);
  }
}

/** Part 2 on one engine, one round: a board of its own, the listener alone, as fast as 32 senders get answers. */
async function bestRate(env, seconds, serverCpu) {
  const { url, child } = await startListener(env);
  try {
    await deliver(url, 1); // warm-up: JIT, connections, the mirror's tables
    const cpu0 = cpuMicros(child.pid);
    const server0 = serverCpu?.();
    const r = await deliver(url, seconds);
    const cpu1 = cpuMicros(child.pid);
    const server1 = serverCpu?.();
    if (r.non2xx + r.errors + r.timeouts > 0) throw new Error(`listen --mirror: ${r.non2xx} non-2xx answers, ${r.errors + r.timeouts} errors`);
    const n = r.requests.total;
    return {
      perSec: r.requests.average,
      p99Ms: r.latency.p99,
      cpuUs: cpu0 === undefined || cpu1 === undefined ? undefined : (cpu1 - cpu0) / n,
      serverCpuUs: server0 === undefined || server1 === undefined ? undefined : (server1 - server0) / n,
    };
  } finally {
    await stopListener(child);
  }
}

/** The ids `card list --where … --mirror` printed, and the run. */
async function whereRun(env) {
  const r = await runCli(['card', 'list', ...WHERE, '--mirror', '--format', 'ndjson'], { env: childEnv(env), rss: true });
  return { ...r, ids: r.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l)._id) };
}

/** The emulator's cards and the board's schema, read once for the mirrors of both engines. */
async function boardOf(emu) {
  const state = await emu.state();
  const schema = await fetch(`${emu.url}/api/aptlet/${BOARD}/schema`, { headers: { 'x-token': emu.env.CARDBOARD_TOKEN } });
  if (!schema.ok) throw new Error(`the emulator's schema: ${schema.status}`);
  return { cards: state[BOARD].cards, fields: await schema.json() };
}

/** Fill the mirror `mirror` names with the board's cards; a build without that engine gives its reason (a string). */
async function fill(emu, board, mirror, pageSize = PAGE_SIZE) {
  try {
    await fillMirror({ CARDBOARD_MIRROR: mirror }, emu.url, board.cards, { pageSize, fields: board.fields });
    return undefined;
  } catch (err) {
    if (err?.constructor?.name === 'UsageError' || /not supported/.test(err?.message)) return `this build has no mirror on PostgreSQL (${err.message.split('\n')[0]})`;
    throw err;
  }
}

const msText = (v) => figure(v, 'ms');
const skippedCell = (why) => `PostgreSQL skipped: ${why}`;

/** Run the mirror-team scenario (this tree's CLI only: the ref has no mirror on PostgreSQL). */
export async function mirrorTeam({ quick }) {
  const loadSeconds = quick ? 3 : 10;
  const loadRounds = quick ? 1 : 2;
  const bestSeconds = quick ? 2 : 5;
  const bestRounds = quick ? 1 : 3;
  const bigCards = quick ? 20_000 : 100_000;
  const whereRuns = quick ? 3 : 5;
  const dir = mkdtempSync(join(tmpdir(), 'cardboard-bench-team-'));
  const pg = await startPostgres();
  let skipped = pg.skipped;
  const serverCpu = pg.skipped ? undefined : pg.cpuMicros;
  const engines = () => (skipped ? ['SQLite'] : ['SQLite', 'PostgreSQL']);
  const mirrorOf = (engine, file) => (engine === 'SQLite' ? join(dir, file) : pg.url);
  const data = { readers: READERS, rate: RATE, seed: SEED, postgres: skipped ? { skipped } : { version: pg.version, own: pg.own } };
  try {
    // 1. Readers beside the listener at RATE a second.
    const emu = await startEmulator({ seedCards: SEED, pageSize: PAGE_SIZE });
    const load = {};
    const loadEnvs = {};
    try {
      const board = await boardOf(emu);
      for (const engine of engines()) {
        const env = { ...emu.env, CARDBOARD_CONFIG_DIR: join(dir, `config-${engine}`), CARDBOARD_MIRROR: mirrorOf(engine, 'load.db') };
        const why = await fill(emu, board, env.CARDBOARD_MIRROR);
        if (why) {
          skipped = why;
          break;
        }
        const expected = (await whereRun(env)).ids.length;
        if (expected === 0) throw new Error('no card matched: the expressions do not fit the seeded cards');
        loadEnvs[engine] = { env, expected };
      }
      for (let i = 0; i < loadRounds; i++) {
        for (const engine of abbaOrder(engines(), i)) {
          log(`${engine}: ${READERS} readers and listen --mirror offered ${RATE} deliveries/s for ${loadSeconds} s, round ${i + 1}/${loadRounds}`);
          const r = await underLoad(loadEnvs[engine].env, loadEnvs[engine].expected, loadSeconds, engine === 'PostgreSQL' ? serverCpu : undefined);
          (load[engine] ??= []).push(r);
          log(`${engine}: ${r.readerRuns} reader runs, ${r.readerErrors} errors; ${r.acked} acknowledged, ${r.rows} in the mirror`);
          if (r.firstError) log(`${engine}: first reader error: ${r.firstError}`);
        }
      }
    } finally {
      await emu.close();
    }
    data.load = { rounds: loadRounds, seconds: loadSeconds, senders: RATE_CONNECTIONS, ...load };

    // 2. The listener alone, as fast as it goes; a board of its own on each engine.
    const best = Object.fromEntries(engines().map((e) => [e, []]));
    for (let i = 0; i < bestRounds; i++) {
      for (const engine of abbaOrder(engines(), i)) {
        log(`${engine}: listen --mirror as fast as ${BEST_CONNECTIONS} senders go, round ${i + 1}/${bestRounds} (${bestSeconds} s)`);
        const env = { CARDBOARD_CONFIG_DIR: join(dir, `config-${engine}`), CARDBOARD_BOARD: `best-${i}`, CARDBOARD_BASE_URL: 'http://127.0.0.1:9', CARDBOARD_MIRROR: mirrorOf(engine, `best-${i}.db`) };
        best[engine].push(await bestRate(env, bestSeconds, engine === 'PostgreSQL' ? serverCpu : undefined));
      }
    }
    data.best = { connections: BEST_CONNECTIONS, seconds: bestSeconds, rounds: bestRounds, ...Object.fromEntries(Object.entries(best).map(([e, rs]) => [e, rs.map((r) => ({ perSec: sig(r.perSec), p99Ms: r.p99Ms, cpuUs: r.cpuUs && sig(r.cpuUs), serverCpuUs: r.serverCpuUs && sig(r.serverCpuUs) }))])) };

    // 3. The 100,000-card --where.
    const big = await startEmulator({ seedCards: bigCards, pageSize: PAGE_SIZE });
    const where = Object.fromEntries(engines().map((e) => [e, { ms: [], cpuMs: [], rssKb: [] }]));
    try {
      const envs = {};
      const board = await boardOf(big);
      for (const engine of engines()) {
        log(`${engine}: filling a mirror with ${bigCards.toLocaleString('en')} cards`);
        envs[engine] = { ...big.env, CARDBOARD_CONFIG_DIR: join(dir, `config-${engine}`), CARDBOARD_MIRROR: mirrorOf(engine, 'big.db') };
        const started = Date.now();
        const why = await fill(big, board, envs[engine].CARDBOARD_MIRROR, FILL_PAGE);
        if (why) throw new Error(why);
        where[engine].fillSeconds = sig((Date.now() - started) / 1000);
      }
      let reference;
      for (let i = 0; i < whereRuns; i++) {
        for (const engine of abbaOrder(engines(), i)) {
          log(`${engine}: card list --where --mirror over ${bigCards.toLocaleString('en')} cards, round ${i + 1}/${whereRuns}`);
          const r = await whereRun(envs[engine]);
          reference ??= r.ids;
          if (r.ids.length === 0) throw new Error('no card matched: the expressions do not fit the seeded cards');
          if (r.ids.length !== reference.length || r.ids.some((id, j) => id !== reference[j])) throw new Error(`${engine}'s mirror printed other cards than the other engine's`);
          where[engine].ms.push(r.ms);
          if (r.cpuMs !== undefined) where[engine].cpuMs.push(r.cpuMs);
          where[engine].rssKb.push(r.rssKb);
        }
      }
      where.matching = reference.length;
    } finally {
      await big.close();
    }
    data.where = { cards: bigCards, runs: whereRuns, matching: where.matching, ...Object.fromEntries(engines().map((e) => [e, { fillSeconds: where[e].fillSeconds, ms: where[e].ms.map((v) => sig(v)), cpuMs: where[e].cpuMs.map((v) => sig(v)), peakMb: sig(Math.max(...where[e].rssKb) / 1024) }])) };
    if (skipped) data.postgres = { skipped };
    return { data, rows: rows({ load, best, where, loadSeconds, loadRounds, bestSeconds, bigCards, skipped }) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
    if (!pg.skipped) await pg.close();
  }
}

/** The table's rows: PostgreSQL in the cardboard column, SQLite beside it. */
function rows({ load, best, where, loadSeconds, loadRounds, bestSeconds, bigCards, skipped }) {
  const total = (rs, key) => rs.reduce((n, r) => n + r[key], 0);
  const loadText = (rs) => {
    const cpu = rs.every((r) => r.cpuUsPerDelivery !== null) ? `, listener ${figure(rs.map((r) => r.cpuUsPerDelivery), 'µs CPU/delivery')}` : '';
    return `${total(rs, 'readerRuns').toLocaleString('en')} reader runs, ${total(rs, 'readerErrors')} reader errors; ${total(rs, 'acked').toLocaleString('en')} deliveries acknowledged, ${total(rs, 'rows').toLocaleString('en')} in the mirror (${total(rs, 'lost')} lost); ${figure(rs.map((r) => r.perSec), 'deliveries/s')}, p99 ${num(median(rs.map((r) => r.p99Ms)))} ms${cpu}`;
  };
  const ok = (rs) => rs.every((m) => m.readerErrors === 0 && m.lost === 0 && m.refused === 0 && m.failed === 0);
  const sqliteLoad = load.SQLite;
  const pgLoad = load.PostgreSQL;
  const loadRatio = pgLoad ? pairedRatio(pgLoad.map((r) => r.perSec), sqliteLoad.map((r) => r.perSec)) : undefined;
  const bestText = (rs) => {
    const cpu = rs.every((r) => r.cpuUs !== undefined) ? `, listener ${figure(rs.map((r) => r.cpuUs), 'µs CPU/delivery')}` : '';
    const server = rs.every((r) => r.serverCpuUs !== undefined) ? ` + server ${figure(rs.map((r) => r.serverCpuUs), 'µs')}` : '';
    return `${figure(rs.map((r) => r.perSec), 'deliveries/s')}, p99 ${num(median(rs.map((r) => r.p99Ms)))} ms${cpu}${server}`;
  };
  const bestRatio = best.PostgreSQL ? pairedRatio(best.PostgreSQL.map((r) => r.perSec), best.SQLite.map((r) => r.perSec)) : undefined;
  const whereText = (w) => `${msText(w.ms)}${w.cpuMs.length > 0 ? ` (CPU ${msText(w.cpuMs)})` : ''}, peak ${num(Math.max(...w.rssKb) / 1024)} MB`;
  const whereRatio = where.PostgreSQL ? pairedRatio(where.PostgreSQL.ms, where.SQLite.ms) : undefined;
  return [
    {
      scenario: `${READERS} readers looping \`card list --where Status=Doing --where Owner~gr --mirror\` while \`webhook listen --json --mirror\` is offered ${RATE} deliveries/s by ${RATE_CONNECTIONS} senders for ${loadSeconds} s${loadRounds > 1 ? ` (${loadRounds} rounds)` : ''}, each a new card, PostgreSQL beside SQLite`,
      cardboard: pgLoad ? `PostgreSQL: ${loadText(pgLoad)}` : skippedCell(skipped),
      beside: `SQLite: ${loadText(sqliteLoad)}`,
      ratio: loadRatio === undefined ? null : sig(loadRatio.median),
      ratioText: loadRatio === undefined ? '—' : `${ratioText(loadRatio)} deliveries/s`,
      goal: `0 reader errors, 0 lost, ≥ ${THROUGHPUT_GOAL}×`,
      met: pgLoad ? ok(pgLoad) && ok(sqliteLoad) && loadRatio.median >= THROUGHPUT_GOAL : null,
    },
    {
      scenario: `\`webhook listen --json --mirror\` alone, ${BEST_CONNECTIONS} senders as fast as it answers, ${bestSeconds} s, PostgreSQL beside SQLite`,
      cardboard: best.PostgreSQL ? `PostgreSQL: ${bestText(best.PostgreSQL)}` : skippedCell(skipped),
      beside: `SQLite: ${bestText(best.SQLite)}`,
      ratio: bestRatio ? sig(bestRatio.median) : null,
      ratioText: bestRatio ? ratioText(bestRatio) : '—',
      goal: `≥ ${THROUGHPUT_GOAL}×`,
      met: bestRatio ? bestRatio.median >= THROUGHPUT_GOAL : null,
    },
    {
      scenario: `\`card list --where Status=Doing --where Owner~gr --mirror\`, ${bigCards.toLocaleString('en')} mirrored cards (${where.matching.toLocaleString('en')} match), PostgreSQL beside SQLite`,
      cardboard: where.PostgreSQL ? `PostgreSQL: ${whereText(where.PostgreSQL)}` : skippedCell(skipped),
      beside: `SQLite: ${whereText(where.SQLite)}`,
      ratio: whereRatio ? sig(whereRatio.median) : null,
      ratioText: whereRatio ? ratioText(whereRatio) : '—',
      goal: `≤ ${WHERE_GOAL}×`,
      met: whereRatio ? whereRatio.median <= WHERE_GOAL : null,
    },
  ];
}
