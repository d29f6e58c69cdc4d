// The tunnel engine in simulated time: a fake tool that prints lines and ends when the script says, a fake
// check that answers per a script, and every event the engine emits, with the simulated time it came at.
import { setMaxListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import type { StartTool, ToolExit } from '../../src/webhook/tunnel/child.js';
import type { TunnelTool } from '../../src/webhook/tunnel/tools.js';
import { type CheckResult, DEFAULT_TIMING, Tunnel, type TunnelEvent, TunnelStartError, type TunnelTiming } from '../../src/webhook/tunnel/tunnel.js';
import { type SimClock, simClock } from '../helpers/sim.js';

const A = 'https://alpha-bravo.trycloudflare.com';
const B = 'https://charlie-delta.trycloudflare.com';
const PATH = '/hooks';
const OK: CheckResult = { ok: true, ms: 42 };
const BAD_GATEWAY: CheckResult = { ok: false, reason: 'answered 502 Bad Gateway' };

/** One run of the fake tool. */
interface FakeRun {
  attempt: number;
  pid: number;
  file: string;
  args: readonly string[];
  startedAt: number;
  stopCalls: number;
  /** Ended, by itself or by stop(). */
  ended: boolean;
  /** Print a line `ms` after the start (if the tool still runs then). */
  say(ms: number, line: string, stream?: 'stdout' | 'stderr'): void;
  /** End by itself `ms` after the start. */
  exitAt(ms: number, code: number): void;
}

/** What the fake tool does on each start (the last script repeats). */
type Script = (run: FakeRun) => void;

/** A tool whose reader takes `URL <url>` as the public URL and `ERR <text>` as an error. */
function fakeTool(urlFrom: 'output' | 'public-url' = 'output'): TunnelTool {
  return {
    name: 'cloudflared',
    args: ['tunnel', '--url', 'http://127.0.0.1:8787'],
    urlFrom,
    reader: () => (line) => {
      const m = /^(URL|ERR) (.*)$/.exec(line);
      if (!m) return undefined;
      return m[1] === 'URL' ? { url: m[2]! } : { error: m[2]! };
    },
  };
}

interface Harness {
  clock: SimClock;
  runs: FakeRun[];
  /** Every event but `output`, with its time. */
  events: Array<{ t: number } & TunnelEvent>;
  checks: Array<{ t: number; url: string }>;
  controller: AbortController;
  tunnel: Tunnel;
  /** Abort the run at simulated time `t`. */
  abortAt(t: number): void;
  /** Drive time until run() settles. */
  run(): Promise<void>;
}

interface HarnessOptions {
  scripts?: Script[];
  /** The answer to the nth check (0-based) at time t. */
  answer?: (n: number, t: number, url: string) => CheckResult;
  /** How long each check takes in simulated time. */
  checkMs?: number;
  timing?: TunnelTiming;
  tool?: TunnelTool | null;
  publicUrl?: string;
}

function harness(o: HarnessOptions): Harness {
  const clock = simClock();
  const runs: FakeRun[] = [];
  const events: Harness['events'] = [];
  const checks: Harness['checks'] = [];
  const controller = new AbortController();
  // The simulated clock's sleep leaves its abort listener on the signal until the signal aborts; with no
  // tool every wait is on this one signal, so a long run adds more than Node's default warning limit.
  setMaxListeners(0, controller.signal);
  const scripts = o.scripts ?? [];
  const start: StartTool = (file, args, onLine) => {
    let finish!: (e: ToolExit) => void;
    const exited = new Promise<ToolExit>((resolve) => (finish = resolve));
    const startedAt = clock.now();
    const run: FakeRun = {
      attempt: runs.length + 1,
      pid: 4000 + runs.length,
      file,
      args,
      startedAt,
      stopCalls: 0,
      ended: false,
      say(ms, line, stream = 'stderr') {
        void clock.sleep(startedAt + ms - clock.now()).then(() => {
          if (!run.ended) onLine(line, stream);
        });
      },
      exitAt(ms, code) {
        void clock.sleep(startedAt + ms - clock.now()).then(() => {
          if (run.ended) return;
          run.ended = true;
          finish({ code, signal: null });
        });
      },
    };
    runs.push(run);
    const script = scripts[Math.min(runs.length - 1, scripts.length - 1)];
    script?.(run);
    return {
      pid: run.pid,
      exited,
      stop() {
        run.stopCalls++;
        if (!run.ended) {
          run.ended = true;
          finish({ code: null, signal: 'SIGTERM' });
        }
        return exited;
      },
    };
  };
  const check = async (url: string, signal: AbortSignal): Promise<CheckResult> => {
    const n = checks.length;
    checks.push({ t: clock.now(), url });
    if (o.checkMs) await clock.sleep(o.checkMs, signal);
    if (signal.aborted) return { ok: false, reason: 'aborted' };
    return (o.answer ?? (() => OK))(n, clock.now(), url);
  };
  const tunnel = new Tunnel({
    tool: o.tool === null ? undefined : (o.tool ?? fakeTool()),
    file: '/usr/local/bin/cloudflared',
    path: PATH,
    publicUrl: o.publicUrl,
    check,
    start,
    clock,
    timing: o.timing,
    signal: controller.signal,
    onEvent: (e) => {
      if (e.type !== 'output') events.push({ t: clock.now(), ...e });
    },
  });
  return {
    clock,
    runs,
    events,
    checks,
    controller,
    tunnel,
    abortAt: (t) => void clock.sleep(t - clock.now()).then(() => controller.abort()),
    run: () => clock.run(tunnel.run()),
  };
}

/** The same URL printed at +100 ms by every run. */
const printsA: Script = (run) => run.say(100, `URL ${A}`);

async function startError(h: Harness): Promise<TunnelStartError> {
  const err = await h.run().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(TunnelStartError);
  return err as TunnelStartError;
}

describe('Tunnel: the first start', () => {
  it('waits 30 s by default for a URL: a tool that prints nothing fails at t=30000, its child stopped', async () => {
    expect(DEFAULT_TIMING.startMs).toBe(30_000);
    const h = harness({ scripts: [(run) => run.say(500, 'INF Requesting new quick Tunnel on trycloudflare.com...')] });
    const err = await startError(h);
    expect(h.clock.now()).toBe(30_000);
    expect(err.message).toBe('cloudflared printed no public URL in 30s');
    expect(h.events).toEqual([{ t: 0, type: 'starting', attempt: 1, pid: 4000 }]);
    expect(h.runs).toHaveLength(1);
    expect(h.runs[0]!.stopCalls).toBe(1);
    expect(h.runs[0]!.file).toBe('/usr/local/bin/cloudflared');
    expect(h.runs[0]!.args).toEqual(['tunnel', '--url', 'http://127.0.0.1:8787']);
    expect(h.checks).toEqual([]);
  });

  it('a tool that exits at start fails at once with its last error line and its exit code', async () => {
    const h = harness({
      scripts: [
        (run) => {
          run.say(200, 'ERR first trouble');
          run.say(300, 'INF some noise');
          run.say(400, 'ERR failed to request quick Tunnel: no such host');
          run.exitAt(450, 1);
        },
      ],
    });
    const err = await startError(h);
    expect(h.clock.now()).toBe(450);
    expect(err.message).toBe('cloudflared exited (code 1): failed to request quick Tunnel: no such host');
    expect(h.runs).toHaveLength(1);
    expect(h.runs[0]!.stopCalls).toBe(1);
  });

  it('a shorter start timeout is honoured, and the reason names it', async () => {
    const h = harness({ scripts: [() => {}], timing: { ...DEFAULT_TIMING, startMs: 5_000 } });
    const err = await startError(h);
    expect(h.clock.now()).toBe(5_000);
    expect(err.message).toBe('cloudflared printed no public URL in 5s');
  });
});

describe('Tunnel: restarts', () => {
  it('waits 1, 2, 4, 8, 16, 30, 30 s between restarts, and 1 s again after a run that was up for stableMs', async () => {
    // Eight runs up 1 s each, then one up 61 s (≥ stableMs 60 s), then one that stays until the end.
    const short: Script = (run) => {
      run.say(100, `URL ${A}`);
      run.say(1_000, 'ERR Connection terminated');
      run.exitAt(1_100, 1);
    };
    const stable: Script = (run) => {
      run.say(100, `URL ${A}`);
      run.exitAt(61_100, 1);
    };
    const scripts = [short, short, short, short, short, short, short, short, stable, printsA];
    const h = harness({ scripts });
    h.abortAt(200_000);
    await h.run();
    expect(h.clock.now()).toBe(200_000);
    const downs = h.events.filter((e) => e.type === 'down');
    expect(downs.map((e) => e.type === 'down' && e.restartInMs)).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000, 1_000]);
    expect(downs[0]).toEqual({ t: 1_100, type: 'down', reason: 'cloudflared exited (code 1): Connection terminated', restartInMs: 1_000 });
    // Each start comes exactly the announced delay after the down before it.
    const starts = h.events.filter((e) => e.type === 'starting').map((e) => e.t);
    expect(starts).toEqual([0, 2_100, 5_200, 10_300, 19_400, 36_500, 67_600, 98_700, 129_800, 191_900]);
    expect(downs.map((e) => e.t)).toEqual([1_100, 3_200, 6_300, 11_400, 20_500, 37_600, 68_700, 99_800, 190_900]);
    // The same URL after each restart: `up` again, no `previous`.
    const ups = h.events.filter((e) => e.type === 'up');
    expect(ups[0]).toEqual({ t: 100, type: 'up', url: `${A}${PATH}`, again: false });
    expect(ups.slice(1)).toEqual(starts.slice(1).map((t) => ({ t: t + 100, type: 'up', url: `${A}${PATH}`, again: true })));
    expect(h.runs).toHaveLength(10);
    expect(h.runs.map((r) => r.stopCalls)).toEqual(Array(10).fill(1));
    expect(h.events.filter((e) => e.type === 'starting').map((e) => e.type === 'starting' && [e.attempt, e.pid])).toEqual(h.runs.map((r) => [r.attempt, r.pid]));
  });

  it('a new URL after a restart is `up` with the previous one', async () => {
    const h = harness({
      scripts: [
        (run) => {
          run.say(100, `URL ${A}`);
          run.exitAt(5_000, 1);
        },
        (run) => run.say(300, `URL ${B}`),
      ],
    });
    h.abortAt(10_000);
    await h.run();
    expect(h.events).toEqual([
      { t: 0, type: 'starting', attempt: 1, pid: 4000 },
      { t: 100, type: 'up', url: `${A}${PATH}`, again: false },
      { t: 100, type: 'reachable', url: `${A}${PATH}`, ms: 42, recovered: false },
      { t: 5_000, type: 'down', reason: 'cloudflared exited (code 1)', restartInMs: 1_000 },
      { t: 6_000, type: 'starting', attempt: 2, pid: 4001 },
      { t: 6_300, type: 'up', url: `${B}${PATH}`, previous: `${A}${PATH}`, again: true },
      { t: 6_300, type: 'reachable', url: `${B}${PATH}`, ms: 42, recovered: false },
    ]);
    expect(h.checks).toEqual([
      { t: 100, url: `${A}${PATH}` },
      { t: 6_300, url: `${B}${PATH}` },
    ]);
  });

  it('a restart that prints no URL is a failure too: the backoff goes on doubling, no TunnelStartError', async () => {
    const h = harness({
      scripts: [
        (run) => {
          run.say(100, `URL ${A}`);
          run.exitAt(1_000, 1);
        },
        (run) => run.exitAt(500, 7),
        (run) => run.exitAt(500, 7),
        printsA,
      ],
    });
    h.abortAt(20_000);
    await h.run();
    expect(h.events.filter((e) => e.type === 'down')).toEqual([
      { t: 1_000, type: 'down', reason: 'cloudflared exited (code 1)', restartInMs: 1_000 },
      { t: 2_500, type: 'down', reason: 'cloudflared exited (code 7)', restartInMs: 2_000 },
      { t: 5_000, type: 'down', reason: 'cloudflared exited (code 7)', restartInMs: 4_000 },
    ]);
    expect(h.events.at(-2)).toEqual({ t: 9_100, type: 'up', url: `${A}${PATH}`, again: true });
  });
});

describe('Tunnel: checks', () => {
  it('the first check is retried every retryMs until it passes: reachable with its ms', async () => {
    const h = harness({ scripts: [printsA], answer: (n) => (n < 3 ? BAD_GATEWAY : { ok: true, ms: 180 }) });
    h.abortAt(10_000);
    await h.run();
    expect(h.checks.map((c) => c.t)).toEqual([100, 2_100, 4_100, 6_100]);
    expect(h.events).toEqual([
      { t: 0, type: 'starting', attempt: 1, pid: 4000 },
      { t: 100, type: 'up', url: `${A}${PATH}`, again: false },
      { t: 6_100, type: 'reachable', url: `${A}${PATH}`, ms: 180, recovered: false },
    ]);
  });

  it('a URL that fails every check for firstCheckMs is unreachable, and the tool is NOT restarted', async () => {
    const h = harness({ scripts: [printsA], answer: () => BAD_GATEWAY });
    h.abortAt(500_000);
    await h.run();
    // First check: every 2 s for 20 s; then one check every 2 min, failures not counted (it never passed).
    expect(h.checks.map((c) => c.t)).toEqual([100, 2_100, 4_100, 6_100, 8_100, 10_100, 12_100, 14_100, 16_100, 18_100, 20_100, 140_100, 260_100, 380_100]);
    expect(h.events).toEqual([
      { t: 0, type: 'starting', attempt: 1, pid: 4000 },
      { t: 100, type: 'up', url: `${A}${PATH}`, again: false },
      { t: 20_100, type: 'unreachable', url: `${A}${PATH}`, reason: 'answered 502 Bad Gateway' },
    ]);
    expect(h.runs).toHaveLength(1);
    expect(h.runs[0]!.stopCalls).toBe(1);
    expect(h.clock.now()).toBe(500_000);
  });

  it('a URL that failed its first check and then passes is reachable, recovered', async () => {
    const h = harness({ scripts: [printsA], answer: (_n, t) => (t < 100_000 ? BAD_GATEWAY : OK) });
    h.abortAt(150_000);
    await h.run();
    expect(h.events.slice(2)).toEqual([
      { t: 20_100, type: 'unreachable', url: `${A}${PATH}`, reason: 'answered 502 Bad Gateway' },
      { t: 140_100, type: 'reachable', url: `${A}${PATH}`, ms: 42, recovered: true },
    ]);
  });

  it('after a passed check, 3 failed checks in a row mean "stopped forwarding": down, and a restart', async () => {
    const h = harness({ scripts: [printsA], answer: (n, t) => (n === 0 || t > 124_100 ? OK : { ok: false, reason: 'no answer (timed out after 10s)' }) });
    h.abortAt(130_000);
    await h.run();
    expect(h.checks.map((c) => c.t)).toEqual([100, 120_100, 122_100, 124_100, 125_200]);
    expect(h.events).toEqual([
      { t: 0, type: 'starting', attempt: 1, pid: 4000 },
      { t: 100, type: 'up', url: `${A}${PATH}`, again: false },
      { t: 100, type: 'reachable', url: `${A}${PATH}`, ms: 42, recovered: false },
      // Up 124 s (≥ stableMs): the backoff starts afresh at 1 s.
      { t: 124_100, type: 'down', reason: 'stopped forwarding: 3 test deliveries in a row failed (last: no answer (timed out after 10s))', restartInMs: 1_000 },
      { t: 125_100, type: 'starting', attempt: 2, pid: 4001 },
      { t: 125_200, type: 'up', url: `${A}${PATH}`, again: true },
      { t: 125_200, type: 'reachable', url: `${A}${PATH}`, ms: 42, recovered: false },
    ]);
    // The tool that stopped forwarding was ended when it was given up, not at the end of the run.
    expect(h.runs[0]!.stopCalls).toBe(1);
    expect(h.runs[0]!.ended).toBe(true);
    expect(h.runs[1]!.stopCalls).toBe(1);
  });

  it('2 failed checks then a pass: no restart, no event', async () => {
    const h = harness({ scripts: [printsA], answer: (n) => (n === 1 || n === 2 ? BAD_GATEWAY : OK) });
    h.abortAt(250_000);
    await h.run();
    expect(h.checks.map((c) => c.t)).toEqual([100, 120_100, 122_100, 124_100, 244_100]);
    expect(h.events.map((e) => [e.t, e.type])).toEqual([
      [0, 'starting'],
      [100, 'up'],
      [100, 'reachable'],
    ]);
    expect(h.runs).toHaveLength(1);
  });

  it('no tool (--public-url alone): up, checks, unreachable and reachable again; never down, nothing started', async () => {
    const url = 'https://hooks.example.com/in';
    // Down for the first 30 s, up until 250 s, down until 300 s, then up.
    const answer = (_n: number, t: number) => (t < 30_000 || (t > 250_000 && t < 300_000) ? { ok: false as const, reason: 'answered 404 Not Found' } : { ok: true as const, ms: 7 });
    const h = harness({ tool: null, publicUrl: url, answer });
    h.abortAt(400_000);
    await h.run();
    expect(h.runs).toEqual([]);
    expect(h.checks.map((c) => c.t)).toEqual([0, 2_000, 4_000, 6_000, 8_000, 10_000, 12_000, 14_000, 16_000, 18_000, 20_000, 140_000, 260_000, 262_000, 264_000, 384_000]);
    expect(h.checks.every((c) => c.url === url)).toBe(true);
    expect(h.events).toEqual([
      { t: 0, type: 'up', url, again: false },
      { t: 20_000, type: 'unreachable', url, reason: 'answered 404 Not Found' },
      { t: 140_000, type: 'reachable', url, ms: 7, recovered: true },
      { t: 264_000, type: 'unreachable', url, reason: 'stopped forwarding: 3 test deliveries in a row failed (last: answered 404 Not Found)' },
      { t: 384_000, type: 'reachable', url, ms: 7, recovered: true },
    ]);
  });

  it('a URL printed again while up: the same is no event, a different one is `up` with the previous', async () => {
    const h = harness({
      scripts: [
        (run) => {
          run.say(100, `URL ${A}`);
          run.say(5_000, `URL ${A}`);
          run.say(8_000, `URL ${B}`);
        },
      ],
    });
    h.abortAt(125_000);
    await h.run();
    expect(h.events).toEqual([
      { t: 0, type: 'starting', attempt: 1, pid: 4000 },
      { t: 100, type: 'up', url: `${A}${PATH}`, again: false },
      { t: 100, type: 'reachable', url: `${A}${PATH}`, ms: 42, recovered: false },
      { t: 8_000, type: 'up', url: `${B}${PATH}`, previous: `${A}${PATH}`, again: true },
      // The new URL is checked at once, as a new URL at start is: a first pass, not a recovery.
      { t: 8_000, type: 'reachable', url: `${B}${PATH}`, ms: 42, recovered: false },
    ]);
    expect(h.checks).toEqual([
      { t: 100, url: `${A}${PATH}` },
      { t: 8_000, url: `${B}${PATH}` },
    ]);
    expect(h.runs).toHaveLength(1);
  });

  it('a URL printed while up that never passes a check is not restarted for failing', async () => {
    const h = harness({
      scripts: [
        (run) => {
          run.say(100, `URL ${A}`);
          run.say(8_000, `URL ${B}`);
        },
      ],
      answer: (_n, _t, url) => (url.startsWith(A) ? OK : BAD_GATEWAY),
    });
    h.abortAt(400_000);
    await h.run();
    // Tried at once for firstCheckMs (every retryMs), then every checkEveryMs, never restarted.
    const firstWindow = Array.from({ length: 11 }, (_, i) => 8_000 + i * 2_000);
    expect(h.checks.map((c) => c.t)).toEqual([100, ...firstWindow, 148_000, 268_000, 388_000]);
    expect(h.events.map((e) => [e.t, e.type])).toEqual([
      [0, 'starting'],
      [100, 'up'],
      [100, 'reachable'],
      [8_000, 'up'],
      [28_000, 'unreachable'],
    ]);
    expect(h.runs).toHaveLength(1);
  });
});

describe('Tunnel: a tool that prints no URL (ssh)', () => {
  const url = 'https://hooks.example.com/';

  it('is up only once a check through --public-url passed', async () => {
    const h = harness({ tool: fakeTool('public-url'), publicUrl: url, scripts: [() => {}], answer: (n) => (n < 3 ? { ok: false, reason: 'answered 502 Bad Gateway' } : { ok: true, ms: 12 }) });
    h.abortAt(7_000);
    await h.run();
    expect(h.checks.map((c) => c.t)).toEqual([0, 2_000, 4_000, 6_000]);
    expect(h.events).toEqual([
      { t: 0, type: 'starting', attempt: 1, pid: 4000 },
      { t: 6_000, type: 'up', url, again: false },
      { t: 6_000, type: 'reachable', url, ms: 12, recovered: false },
    ]);
  });

  it('fails to start (TunnelStartError) when no check passes within startMs; its child stopped', async () => {
    const h = harness({ tool: fakeTool('public-url'), publicUrl: url, scripts: [(run) => run.say(10, 'ERR Warning: remote port forwarding failed for listen port 8787', 'stderr')], answer: () => BAD_GATEWAY });
    const err = await startError(h);
    expect(h.clock.now()).toBe(30_000);
    expect(h.checks).toHaveLength(16);
    expect(err.message).toBe(`no test delivery came through ${url} in 30s (answered 502 Bad Gateway): Warning: remote port forwarding failed for listen port 8787`);
    expect(h.events).toEqual([{ t: 0, type: 'starting', attempt: 1, pid: 4000 }]);
    expect(h.runs[0]!.stopCalls).toBe(1);
  });

  it('the last try comes no later than startMs: with 5 s and tries every 2 s, it fails at t=4000', async () => {
    const h = harness({ tool: fakeTool('public-url'), publicUrl: url, scripts: [() => {}], answer: () => BAD_GATEWAY, timing: { ...DEFAULT_TIMING, startMs: 5_000 } });
    const err = await startError(h);
    expect(h.checks.map((c) => c.t)).toEqual([0, 2_000, 4_000]);
    expect(h.clock.now()).toBe(4_000);
    expect(err.message).toBe(`no test delivery came through ${url} in 5s (answered 502 Bad Gateway)`);
  });

  it('fails at once, with the exit code, when the tool ends before a check passed', async () => {
    const h = harness({
      tool: fakeTool('public-url'),
      publicUrl: url,
      scripts: [
        (run) => {
          run.say(300, 'ERR Permission denied (publickey).');
          run.exitAt(300, 255);
        },
      ],
      answer: () => BAD_GATEWAY,
    });
    const err = await startError(h);
    expect(h.clock.now()).toBe(300);
    expect(err.message).toBe('cloudflared exited (code 255): Permission denied (publickey).');
  });
});

describe('Tunnel: stopping', () => {
  /**
   * The scenario: a URL at 100; checks take 500 ms, the first two fail (100-600, 2600-3100), the third passes
   * (5100-5600); a periodic check at 125600-126100; the tool ends at 150 s, is started again at 151 s and
   * prints its URL at 151.2 s.
   */
  const phases: Array<[string, number]> = [
    ['before the tool printed its URL', 50],
    ['during the first check, in a check', 2_800],
    ['during the first check, between tries', 1_000],
    ['while up, between checks', 60_000],
    ['while up, in a periodic check', 125_800],
    ['in the backoff before a restart', 150_500],
    ['after the restart, before its URL', 151_050],
  ];
  for (const [phase, at] of phases) {
    it(`abort ${phase} (t=${at}): run() resolves then, every started child was stopped`, async () => {
      const h = harness({
        scripts: [
          (run) => {
            run.say(100, `URL ${A}`);
            run.exitAt(150_000, 1);
          },
          (run) => run.say(200, `URL ${A}`),
        ],
        checkMs: 500,
        answer: (n) => (n === 0 || n === 1 ? BAD_GATEWAY : OK),
      });
      h.abortAt(at);
      await h.run();
      expect(h.clock.now()).toBe(at);
      expect(h.runs.length).toBeGreaterThan(0);
      for (const run of h.runs) {
        expect(run.stopCalls).toBe(1);
        expect(run.ended).toBe(true);
      }
      // Nothing is reported after the stop.
      expect(h.events.every((e) => e.t <= at)).toBe(true);
      expect(h.runs).toHaveLength(at > 151_000 ? 2 : 1);
    });
  }

  it('abort while a tool prints nothing (ssh-like, checks failing): run() resolves, the child stopped, no error', async () => {
    const h = harness({ tool: fakeTool('public-url'), publicUrl: 'https://hooks.example.com/', scripts: [() => {}], answer: () => BAD_GATEWAY });
    h.abortAt(9_000);
    await h.run();
    expect(h.clock.now()).toBe(9_000);
    expect(h.runs[0]!.stopCalls).toBe(1);
    expect(h.events).toEqual([{ t: 0, type: 'starting', attempt: 1, pid: 4000 }]);
  });

  it('abort with no tool: run() resolves at once', async () => {
    const h = harness({ tool: null, publicUrl: 'https://hooks.example.com/', answer: () => OK });
    h.abortAt(1_000);
    await h.run();
    expect(h.clock.now()).toBe(1_000);
    expect(h.events).toEqual([
      { t: 0, type: 'up', url: 'https://hooks.example.com/', again: false },
      { t: 0, type: 'reachable', url: 'https://hooks.example.com/', ms: 42, recovered: false },
    ]);
  });
});
