// Single commands wait for a 429: every reader and writer waits for Retry-After while a
// 60 s budget lasts, says so on stderr each time, and only then exits 1 naming the limit. Simulated time.
import { describe, expect, it } from 'vitest';
import { rateLimitNotice } from '../../src/api/session.js';
import type { Context } from '../../src/context.js';
import { ApiError } from '../../src/errors.js';
import type { HttpRequest, HttpResponse, Send } from '../../src/http/core.js';
import { DEFAULT_RETRY, retryDelay, waitLine } from '../../src/http/command-policy.js';
import { withRetry } from '../../src/http/retry.js';
import { runMain } from '../helpers/cli.js';
import { type SimClock, SimService, simApi, simClock } from '../helpers/sim.js';

const GET: HttpRequest = { method: 'GET', path: '/x' };
const POST: HttpRequest = { method: 'POST', path: '/x', body: {} };
const limited = (retryAfter?: number, status = 429) => new ApiError(`${status} from POST`, { method: 'POST', url: 'u', status, retryAfter });
const ok: HttpResponse = { status: 200, headers: {}, body: 'ok', url: 'u', method: 'GET' };

/** A `next` answering from a script, in simulated time; each entry is tried once, the last repeats. */
function scripted(clock: SimClock, outcomes: Array<Error | HttpResponse>): { send: Send; tries: number[] } {
  const tries: number[] = [];
  return {
    tries,
    send: async () => {
      tries.push(clock.now());
      const next = outcomes[Math.min(tries.length - 1, outcomes.length - 1)]!;
      if (next instanceof Error) throw next;
      return next;
    },
  };
}

/** The simulated clock with no jitter: every wait is exactly what the server asked. */
const exact = (clock: SimClock): SimClock => ({ ...clock, random: () => 0 });

describe('the waiting budget of a command (withRetry, simulated clock)', () => {
  it('waits for every Retry-After past the 4 tries of other failures, saying so each time', async () => {
    const clock = exact(simClock());
    const lines: string[] = [];
    const fake = scripted(clock, [limited(3), limited(3), limited(3), limited(3), limited(3), ok]);
    const send = withRetry(fake.send, { clock, onWait: (l) => lines.push(l) });
    await expect(clock.run(send(POST))).resolves.toBe(ok);
    expect(fake.tries).toEqual([0, 3000, 6000, 9000, 12_000, 15_000]);
    expect(lines).toHaveLength(5);
    expect(lines[0]).toBe('Rate limited (429); waiting 3s as the service asked (Retry-After: 3s), then trying again…');
  });

  it('spreads the processes told the same Retry-After: up to 1 s more, said so; the budget counts what was asked', async () => {
    const clock = simClock(5);
    const lines: string[] = [];
    const fake = scripted(clock, [limited(20)]);
    const err = (await clock.run(withRetry(fake.send, { clock, onWait: (l) => lines.push(l) })(POST)).catch((e: unknown) => e)) as ApiError;
    const waits = fake.tries.slice(1).map((t, i) => t - fake.tries[i]!);
    // Three waits of 20 s (60 s asked in all), each with its own spread below 1 s.
    expect(waits).toHaveLength(3);
    for (const w of waits) {
      expect(w).toBeGreaterThanOrEqual(20_000);
      expect(w).toBeLessThan(21_000);
    }
    expect(new Set(waits).size).toBe(3);
    expect(lines[0]).toMatch(/^Rate limited \(429\); waiting 20\.\ds as the service asked \(Retry-After: 20s, plus jitter\), then trying again…$/);
    expect(err.message).toContain('waited 1m in all for the service and asks for 20s more');
  });

  it('stops when the next wait would pass 60 s in all, naming the wait and the limit, without --rate', async () => {
    const clock = exact(simClock());
    const fake = scripted(clock, [limited(20)]);
    const send = withRetry(fake.send, { clock });
    const err = (await clock.run(send(POST)).catch((e: unknown) => e)) as ApiError;
    // 20 + 20 + 20 = 60 s waited; a fourth wait would make 80 s.
    expect(fake.tries).toEqual([0, 20_000, 40_000, 60_000]);
    expect(err).toBeInstanceOf(ApiError);
    expect(err.exitCode).toBe(1);
    expect(err.message).toContain('waited 1m in all for the service and asks for 20s more; a command waits at most 1m: stopped.');
    expect(err.hint).toContain('120 requests a minute per API key');
    expect(err.hint).toContain('shared by all keys of a company');
    expect(err.hint).not.toContain('--rate');
  });

  it('a Retry-After longer than the whole budget stops at once (nothing is waited)', async () => {
    const clock = simClock();
    const fake = scripted(clock, [limited(90)]);
    const err = (await clock.run(withRetry(fake.send, { clock })(GET)).catch((e: unknown) => e)) as ApiError;
    expect(fake.tries).toEqual([0]);
    expect(err.message).toContain('the server asks to wait 1m30s (Retry-After), longer than the 1m a command waits: stopped.');
  });

  it('a 429 without Retry-After backs off with jitter (not the same instant for every process), within the budget', async () => {
    const clock = simClock(3);
    const lines: string[] = [];
    const fake = scripted(clock, [limited(undefined)]);
    const err = (await clock.run(withRetry(fake.send, { clock, onWait: (l) => lines.push(l) })(GET)).catch((e: unknown) => e)) as ApiError;
    const waits = fake.tries.slice(1).map((t, i) => t - fake.tries[i]!);
    // The 1 s floor plus full jitter under a doubling ceiling (500 ms, 1 s, 2 s … 8 s): each wait in its window, not all equal.
    waits.forEach((w, i) => {
      expect(w).toBeGreaterThanOrEqual(1000);
      expect(w).toBeLessThan(1000 + Math.min(8000, 500 * 2 ** i));
    });
    expect(new Set(waits).size).toBeGreaterThan(1);
    expect(waits.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(60_000);
    expect(fake.tries.length).toBeGreaterThan(DEFAULT_RETRY.maxTries);
    expect(lines[0]).toMatch(/^Rate limited \(429\); waiting \d+(\.\d)?s, then trying again…$/);
    expect(err.message).toMatch(/waited \d+s in all for the service; a command waits at most 1m: stopped\.$/);
  });

  it('the budget counts waits since the last answer that got through: a listing of many pages keeps going', async () => {
    const clock = exact(simClock());
    // Each page: two 429s of 25 s, then the page. 50 s per page, 150 s in all, never 60 s without progress.
    const page = [limited(25), limited(25), ok];
    const fake = scripted(clock, [...page, ...page, ...page]);
    const send = withRetry(fake.send, { clock });
    for (let i = 0; i < 3; i++) await clock.run(send(GET));
    expect(clock.now()).toBe(150_000);
  });

  it('a Retry-After: 0 loop ends after 50 tries of one request, each at least 1 s after the last', async () => {
    const clock = simClock();
    const fake = scripted(clock, [limited(0)]);
    const err = (await clock.run(withRetry(fake.send, { clock })(POST)).catch((e: unknown) => e)) as ApiError;
    expect(fake.tries).toHaveLength(50);
    for (const [i, t] of fake.tries.slice(1).entries()) expect(t - fake.tries[i]!).toBeGreaterThanOrEqual(1000);
    expect(err.message).toContain('still rate-limited after 50 tries: stopped.');
  });

  it('a 503 without Retry-After keeps the 4 tries of other failures; with one it waits like a 429', () => {
    const state = { throttledTries: 0, waitedMs: 0 };
    expect(retryDelay(limited(undefined, 503), POST, 4, DEFAULT_RETRY, () => 0.5, state)).toBeUndefined();
    expect(retryDelay(limited(5, 503), POST, 4, DEFAULT_RETRY, () => 0, { throttledTries: 3, waitedMs: 15_000 })).toBe(5000);
    expect(waitLine(limited(5, 503), 5000)).toBe('Service unavailable (503); waiting 5s as the service asked (Retry-After: 5s), then trying again…');
  });
});

describe('every single command waits (runMain in-process, sim clock, a fake service limited to 120/min, burst 2)', () => {
  /** Run `args` against a fake service whose bucket is empty: the first request of the command is answered 429. */
  async function throttled(args: string[], seed: (s: SimService) => void = () => {}, globals: string[] = []) {
    const clock = simClock(1, { realIoMs: 5000 });
    const service = new SimService(clock, { rateLimit: { perMinute: 120, burst: 2 } });
    seed(service);
    const drain = simApi(service, clock);
    await clock.run(drain.getSchema());
    await clock.run(drain.getSchema()); // the burst is spent: the next request waits for the bucket
    const run = runMain([...globals, ...args], {
      env: { CARDBOARD_BASE_URL: 'http://127.0.0.1:9', CARDBOARD_BOARD: 'b', CARDBOARD_TOKEN: 'tok-test' },
      context: () => ({ clock, api: async (ctx: Context) => simApi(service, clock, undefined, { onWait: rateLimitNotice(ctx) }) }),
    });
    const r = await clock.run(run);
    return { ...r, service, waited: clock.now() };
  }
  const card = (s: SimService) => void s.cards.push({ _id: 'c1', Name: 'One', Status: 'Open' });

  it.each([
    ['schema', ['schema', '--json']],
    ['card put', ['card', 'put', 'Name=x', '--json']],
    ['card get', ['card', 'get', 'c1', '--json']],
    ['card list', ['card', 'list', '--format', 'json']],
    ['card list --all', ['card', 'list', '--all', '--format', 'ndjson']],
    ['comment', ['comment', 'c1', 'hello', '--json']],
  ])('%s: waits the Retry-After, says so on stderr only, then succeeds', async (_name, args) => {
    const r = await throttled(args, card);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/^Rate limited \(429\); waiting 1(\.\d)?s as the service asked \(Retry-After: 1s(, plus jitter)?\), then trying again…$/m);
    expect(r.stdout).not.toContain('Rate limited');
    expect(r.service.log.some((e) => e.status === 429)).toBe(true);
    expect(r.waited).toBeGreaterThanOrEqual(1000);
  });

  it('--quiet: the wait is not said, the command still waits and succeeds', async () => {
    const r = await throttled(['card', 'put', 'Name=x'], () => {}, ['--quiet']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.service.count('x')).toBe(1);
  });
});
