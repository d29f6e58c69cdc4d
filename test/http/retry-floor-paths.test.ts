// The retry floor in every path of the one retry loop: a command's policy, the import's write policy (with
// the rate gate), and the app policy (the listener's forwards, over HTTP to a real local app). Each path is
// driven in simulated time with chance fixed at 0, so backoff and jitter add nothing: every wait seen is
// the floor itself, and without it a declined request (429, 503) would be sent again at once.
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Clock } from '../../src/clock.js';
import { ApiError } from '../../src/errors.js';
import { appFailure, appPolicy } from '../../src/http/app-policy.js';
import type { HttpRequest, HttpResponse, Send } from '../../src/http/core.js';
import { RETRY_FLOOR_MS } from '../../src/http/failure.js';
import { Pacer, withPacer } from '../../src/http/pacer.js';
import { retrying, withRetry } from '../../src/http/retry.js';
import { writePolicy } from '../../src/http/write-policy.js';
import { type ForwardEvent, Forwarder } from '../../src/webhook/forwarder.js';
import { RecordFile } from '../../src/webhook/record-file.js';
import { tempDir } from '../helpers/cli.js';
import { startLocalServer } from '../helpers/receiver.js';
import { simClock } from '../helpers/sim.js';

/** The floor docs/boards-and-credentials.md promises: a second between tries of a declined request. */
const FLOOR_MS = 1000;

/** Declined answers: with a Retry-After of "now" (the wait is the floor), and without one (the floor plus the backoff). */
const DECLINED: Array<[name: string, status: number, retryAfter: number | undefined]> = [
  ['429, Retry-After: 0', 429, 0],
  ['429 without Retry-After', 429, undefined],
  ['503, Retry-After: 0', 503, 0],
  ['503 without Retry-After', 503, undefined],
];

const ok = (method: string): HttpResponse => ({ status: 200, headers: {}, body: { _id: 'c1' }, url: 'u', method });
const declined = (method: string, status: number, retryAfter: number | undefined) => new ApiError(`${status} from ${method}`, { method, url: 'u', status, retryAfter });

/** A simulated clock whose chance is always 0: no backoff, no jitter. */
function zeroChanceClock() {
  const clock = simClock();
  clock.random = () => 0;
  return clock;
}

/** A fake `next` answering `failures` declined answers, then 200, noting the simulated time of each try. */
function declining(clock: Clock, failures: number, status: number, retryAfter: number | undefined) {
  const at: number[] = [];
  const next: Send = async (req) => {
    at.push(clock.now());
    if (at.length <= failures) throw declined(req.method, status, retryAfter);
    return ok(req.method);
  };
  return { next, gaps: () => at.slice(1).map((t, i) => t - at[i]!) };
}

it('the floor is a second', () => {
  expect(RETRY_FLOOR_MS).toBe(FLOOR_MS);
});

describe.each(DECLINED)('a request declined with %s waits at least the floor before each try', (_name, status, retryAfter) => {
  it("under a command's policy (the client's default)", async () => {
    const clock = zeroChanceClock();
    const { next, gaps } = declining(clock, 3, status, retryAfter);
    const send = withRetry(next, { clock });
    const res = await clock.run(send({ method: 'GET', path: '/api/aptlet/b/schema' }));
    expect(res.status).toBe(200);
    expect(gaps()).toHaveLength(3);
    for (const gap of gaps()) expect(gap).toBeGreaterThanOrEqual(FLOOR_MS);
  });

  it("under the import's write policy, behind the rate gate", async () => {
    const clock = zeroChanceClock();
    const { next, gaps } = declining(clock, 3, status, retryAfter);
    const send = withRetry(withPacer(next, new Pacer({ clock })), { clock });
    const policy = writePolicy({ clock, maxTries: 6, giveUpAfterMs: 60_000, unreachableAfterMs: 60_000, settle: async () => 'repeat' });
    const req: HttpRequest = { method: 'POST', path: '/api/aptlet/b', body: { Name: 'x' }, retry: policy };
    const res = await clock.run(send(req));
    expect(res.status).toBe(200);
    expect(gaps()).toHaveLength(3);
    for (const gap of gaps()) expect(gap).toBeGreaterThanOrEqual(FLOOR_MS);
  });

  it('under the app policy (the one loop, as the forwarder runs it)', async () => {
    const clock = zeroChanceClock();
    const at: number[] = [];
    const answer = { status, retryAfter: retryAfter === undefined ? undefined : String(retryAfter) };
    const once = async () => {
      at.push(clock.now());
      if (at.length <= 3) throw appFailure('POST', 'http://127.0.0.1:1/hooks', answer, clock.now());
      return 'delivered';
    };
    const policy = appPolicy<undefined>({ clock, stop: new AbortController().signal });
    expect(await clock.run(retrying(once, undefined, policy, undefined, { clock }))).toBe('delivered');
    const gaps = at.slice(1).map((t, i) => t - at[i]!);
    expect(gaps).toHaveLength(3);
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(FLOOR_MS);
  });
});

describe('the forwarder, over HTTP to an app that declines', () => {
  const closers: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });

  /** A local app answering each forward with the next of `script` (status, Retry-After), then 200. */
  async function app(script: Array<[number, string | undefined]>): Promise<{ url: string; tries: () => number }> {
    let tries = 0;
    const local = await startLocalServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const [status, retryAfter] = script[tries++] ?? [200, undefined];
        res.writeHead(status, retryAfter === undefined ? {} : { 'retry-after': retryAfter }).end('{}');
      });
    });
    closers.push(local.close);
    return { url: `${local.url}/hooks`, tries: () => tries };
  }

  /**
   * Forward one recorded delivery to `url` until it is delivered. Time is simulated: each wait is noted and
   * ends at once (the clock moves by it), chance is 0 (no backoff, no jitter).
   */
  async function forwardOne(url: string): Promise<{ events: ForwardEvent[]; waits: number[] }> {
    let now = 0;
    const waits: number[] = [];
    const clock: Clock = {
      now: () => now,
      random: () => 0,
      sleep: async (ms) => {
        waits.push(ms);
        now += ms;
      },
    };
    const record = new RecordFile(join(tempDir(), 'floor.jsonl'));
    closers.push(() => record.close());
    const events: ForwardEvent[] = [];
    let delivered!: () => void;
    const done = new Promise<void>((resolve) => (delivered = resolve));
    const forwarder = new Forwarder({
      url,
      timeout: { ms: 30_000, text: '30s' },
      key: 'sk-floor-0123456789',
      record,
      clock,
      onEvent: (e) => {
        events.push(e);
        if (e.ok) delivered();
      },
    });
    closers.push(() => forwarder.stop());
    const { delivery, offset } = record.append({ receivedAt: new Date(0).toISOString(), method: 'POST', path: '/hooks', headers: { 'content-type': 'application/json' }, body: Buffer.from('{"_id":"c1"}') });
    forwarder.start();
    forwarder.enqueue(delivery, offset);
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`not delivered within 20 s: ${JSON.stringify(events.map((e) => e.answer.status ?? e.answer.error))}`)), 20_000);
    });
    await Promise.race([done, deadline]).finally(() => clearTimeout(timer));
    return { events, waits };
  }

  it('waits at least the floor after each 429 or 503, with a Retry-After of "now" or none, and then delivers', async () => {
    const past = new Date(-60_000).toUTCString();
    const target = await app([
      [503, '0'],
      [429, undefined],
      [503, 'soon'],
      [429, past],
      [503, undefined],
    ]);
    const { events, waits } = await forwardOne(target.url);
    expect(target.tries()).toBe(6);
    expect(events.map((e) => e.answer.status)).toEqual([503, 429, 503, 429, 503, 200]);
    expect(events.at(-1)).toMatchObject({ ok: true, attempt: 6 });
    expect(waits).toHaveLength(5);
    for (const wait of waits) expect(wait).toBeGreaterThanOrEqual(FLOOR_MS);
    // The wait said in each failed try's event is the one waited.
    expect(events.slice(0, -1).map((e) => e.retryInMs)).toEqual(waits);
  });

  it("honours the app's longer Retry-After; a failure the app did not decline keeps the short backoff", async () => {
    const target = await app([
      [503, '3'],
      [500, undefined],
    ]);
    const { events, waits } = await forwardOne(target.url);
    expect(events.map((e) => e.answer.status)).toEqual([503, 500, 200]);
    expect(waits[0]).toBeGreaterThanOrEqual(3000);
    // Chance 0: the backoff of a 500 is 0, with no floor.
    expect(waits[1]).toBe(0);
  });
});
