import { describe, expect, it } from 'vitest';
import { RateLimiter } from '../../src/emulator/rate-limit.js';
import { Pacer, type PacerClock } from '../../src/http/pacer.js';

/** A discrete-event clock: sleeps resolve in time order, and time jumps instead of passing. */
function simClock() {
  let now = 0;
  const timers: { at: number; resolve: () => void }[] = [];
  const clock: PacerClock = {
    now: () => now,
    sleep: (ms: number) => new Promise<void>((resolve) => timers.push({ at: now + Math.max(0, ms), resolve })),
  };
  async function runUntil(end: number): Promise<void> {
    while (now < end) {
      await new Promise((r) => setImmediate(r));
      if (timers.length === 0) return;
      timers.sort((a, b) => a.at - b.at);
      const t = timers.shift()!;
      now = Math.max(now, t.at);
      t.resolve();
    }
  }
  return { clock, runUntil };
}

/** Workers sending through the pacer to the emulator's token bucket, each request taking `latencyMs`. */
async function simulate(perMinute: number, burst: number, seconds: number, opts: { concurrency?: number; latencyMs?: number; fixedRate?: number } = {}) {
  const { clock, runUntil } = simClock();
  const pacer = new Pacer({ clock, fixedRate: opts.fixedRate });
  const bucket = new RateLimiter(perMinute, burst);
  let ok = 0;
  let throttled = 0;
  let running = true;
  const worker = async () => {
    while (running) {
      const sentAt = await pacer.acquire();
      if (!running) return;
      await clock.sleep(opts.latencyMs ?? 20);
      const wait = bucket.take('t', clock.now());
      if (wait === 0) {
        ok++;
        pacer.succeeded();
      } else {
        throttled++;
        pacer.throttled(sentAt, wait * 1000);
      }
    }
  };
  const workers = Array.from({ length: opts.concurrency ?? 8 }, worker);
  await runUntil(seconds * 1000);
  running = false;
  void workers;
  return { ok, throttled, allowed: (perMinute / 60) * seconds + burst };
}

describe('Pacer', () => {
  it('learns a 120/min limit with burst 20: close to the allowed rate, few 429s', async () => {
    const r = await simulate(120, 20, 600);
    expect(r.ok / r.allowed).toBeGreaterThan(0.95);
    expect(r.throttled / (r.ok + r.throttled)).toBeLessThan(0.03);
  });

  it('learns a 1200/min limit with burst 5 from a low first guess', async () => {
    const r = await simulate(1200, 5, 120);
    expect(r.ok / r.allowed).toBeGreaterThan(0.75);
    expect(r.throttled / (r.ok + r.throttled)).toBeLessThan(0.03);
  });

  it('does not throttle itself when the server has no limit', async () => {
    const r = await simulate(1e9, 1e9, 10, { concurrency: 4, latencyMs: 10 });
    expect(r.throttled).toBe(0);
    expect(r.ok).toBeGreaterThanOrEqual(3990);
  });

  it('holds a fixed --rate even when the server would take more', async () => {
    const r = await simulate(6000, 10, 60, { fixedRate: 2 });
    expect(r.throttled).toBe(0);
    expect(r.ok).toBeGreaterThanOrEqual(119);
    expect(r.ok).toBeLessThanOrEqual(121);
  });

  it('with a fixed --rate above the limit, pauses every worker for Retry-After instead of hammering', async () => {
    const r = await simulate(60, 1, 60, { fixedRate: 4 });
    // Each 429 holds everyone for 1 s: at most one 429 per accepted request.
    expect(r.ok).toBeGreaterThanOrEqual(29);
    expect(r.throttled).toBeLessThanOrEqual(r.ok + 8);
  });
});
