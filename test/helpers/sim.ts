// Simulated time for engines and policies: a discrete-event clock (sleeps resolve in time order, time
// jumps instead of passing), a seeded random, and a fake Card Board Service at the `Send` level, so the
// real retry wrapper, rate gate and Api run over it with no sockets and no waiting.
import { apiOver } from '../../src/api/index.js';
import type { ApiClient } from '../../src/api/types.js';
import { type Clock, realClock } from '../../src/clock.js';
import { createContext } from '../../src/context.js';
import { seededRandom as seeded } from '../../src/emulator/faults.js';
import { RateLimiter } from '../../src/emulator/rate-limit.js';
import { ApiError } from '../../src/errors.js';
import type { HttpRequest, HttpResponse, Send } from '../../src/http/core.js';
import type { Http } from '../../src/http/index.js';
import { parseRetryAfter } from '../../src/http/message.js';
import { Pacer, withPacer } from '../../src/http/pacer.js';
import { type RetryOptions, withRetry } from '../../src/http/retry.js';
import type { Card } from '../../src/spec-types.js';

/**
 * For a whole command run over real sockets (runMain's `context`): a clock `aheadMs` ahead of the real one
 * whose sleeps move its time on by what they slept and return after one turn of the event loop, so the
 * run's waits (Retry-After, the retry floor, backoffs) take no real time; `waited` says how long each one
 * was. The turn matters: a sleep that resolved at once would never yield to I/O, and a loop of sleeps (an
 * import's periodic flush of its report files) would spin for ever with the answers it waits for unread.
 */
export function skippingClock(aheadMs = 0): { waited: number[]; context: () => { clock: Clock } } {
  const waited: number[] = [];
  let skipped = aheadMs;
  const clock: Clock = {
    ...realClock,
    now: () => Date.now() + skipped,
    sleep: async (ms: number) => {
      waited.push(ms);
      skipped += Math.max(0, ms);
      await new Promise((resolve) => setImmediate(resolve));
    },
  };
  return { waited, context: () => ({ clock }) };
}

/** A discrete-event clock; `run(p)` drives time until `p` settles. */
export interface SimClock extends Clock {
  run<T>(work: Promise<T>, limitMs?: number): Promise<T>;
}

/**
 * `realIoMs`: how long (real time) to let real I/O finish before calling the simulation stalled: a whole
 * command run in-process loads its modules and files for real (default 0: stalled at once).
 */
export function simClock(seed = 1, opts: { realIoMs?: number } = {}): SimClock {
  let now = 0;
  let timers: { at: number; seq: number; resolve: () => void }[] = [];
  let seq = 0;
  const clock: SimClock = {
    now: () => now,
    random: seeded(seed),
    sleep(ms, signal) {
      return new Promise<void>((resolve) => {
        if (signal?.aborted || ms <= 0) return resolve();
        const timer = { at: now + ms, seq: seq++, resolve };
        timers.push(timer);
        signal?.addEventListener(
          'abort',
          () => {
            timers = timers.filter((t) => t !== timer);
            resolve();
          },
          { once: true },
        );
      });
    },
    async run(work, limitMs = 24 * 3_600_000) {
      let settled = false;
      const done = work.finally(() => (settled = true));
      done.catch(() => {});
      while (!settled) {
        // Let every promise chain run before time moves on.
        for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
        if (settled) break;
        for (let waited = 0; timers.length === 0 && !settled && waited < (opts.realIoMs ?? 0); waited += 5) await new Promise((r) => setTimeout(r, 5));
        if (settled) break;
        if (timers.length === 0) throw new Error(`simulation stalled at t=${now} ms: nothing pending and the work is not done`);
        timers.sort((a, b) => a.at - b.at || a.seq - b.seq);
        const t = timers.shift()!;
        now = Math.max(now, t.at);
        if (now > limitMs) throw new Error(`simulation passed ${limitMs} ms`);
        t.resolve();
      }
      return done;
    },
  };
  return clock;
}

/** Probabilities of each fault (as the emulator's --faults), per POST or GET. */
export interface SimFaults {
  /** 503 with Retry-After 1, nothing applied. */
  unavailable?: number;
  /** Applied, then answered 500. */
  errorAfter?: number;
  /** Connection reset before the request was applied. */
  reset?: number;
  /** Applied, then the connection reset. */
  resetAfter?: number;
  /** Refused connection: never reached the server. */
  refused?: number;
}

export interface SimServiceOptions {
  pageSize?: number;
  faults?: SimFaults;
  /** A per-token token bucket, as the service's 120/min with bursts of 20. */
  rateLimit?: { perMinute: number; burst: number };
  /** Every answer takes this long (simulated). */
  latencyMs?: number;
  /** Answer every request 429 with this Retry-After: seconds, or a header as a server sends it (`0`, a date, `soon`), parsed at the simulated now. */
  always429?: number | string;
  /** Retry-After (seconds) of the 503 fault (default 1). */
  retryAfter?: number;
  updateMode?: 'Always Create New' | 'Update if exists';
}

/** An in-memory board behind a `Send`: what the core would answer, in simulated time. */
export class SimService {
  readonly cards: Card[] = [];
  readonly log: { method: string; status: number | string; at: number }[] = [];
  private nextId = 1;
  private readonly random: () => number;
  private readonly bucket?: RateLimiter;

  constructor(
    private readonly clock: SimClock,
    readonly opts: SimServiceOptions = {},
    seed = 7,
  ) {
    this.random = seeded(seed);
    if (opts.rateLimit) this.bucket = new RateLimiter(opts.rateLimit.perMinute, opts.rateLimit.burst);
  }

  /** Cards whose Name is `name`. */
  count(name: string): number {
    return this.cards.filter((c) => c.Name === name).length;
  }

  private fail(req: HttpRequest, status: number | undefined, code?: string, retryAfter?: number): never {
    this.log.push({ method: req.method, status: status ?? code ?? '?', at: this.clock.now() });
    throw new ApiError(`${status ?? code} from ${req.method}`, { method: req.method, url: req.path, status, code, retryAfter });
  }

  private roll(p: number | undefined): boolean {
    return p !== undefined && p > 0 && this.random() < p;
  }

  readonly send: Send = async (req) => {
    const f = this.opts.faults ?? {};
    if (this.roll(f.refused)) this.fail(req, undefined, 'ECONNREFUSED');
    await this.clock.sleep(this.opts.latencyMs ?? 5);
    const always = this.opts.always429;
    if (always !== undefined) this.fail(req, 429, undefined, typeof always === 'number' ? always : parseRetryAfter(always, this.clock.now()));
    const wait = this.bucket?.take('token', this.clock.now()) ?? 0;
    if (wait > 0) this.fail(req, 429, undefined, wait);
    if (this.roll(f.unavailable) && !(req.method === 'GET' && req.path.endsWith('/schema'))) this.fail(req, 503, undefined, this.opts.retryAfter ?? 1);
    if (this.roll(f.reset)) this.fail(req, undefined, 'ECONNRESET');
    const body = this.apply(req);
    if (this.roll(f.errorAfter)) this.fail(req, 500);
    if (this.roll(f.resetAfter)) this.fail(req, undefined, 'ECONNRESET');
    this.log.push({ method: req.method, status: 200, at: this.clock.now() });
    const res: HttpResponse = { status: 200, headers: {}, body, url: req.path, method: req.method };
    return res;
  };

  private apply(req: HttpRequest): unknown {
    // One card (spec 4.4) and a comment (spec 4.1), for the single commands.
    const one = req.method === 'GET' ? /\/card\/([^/]+)$/.exec(req.path) : null;
    if (one) {
      const card = this.cards.find((c) => c._id === decodeURIComponent(one[1]!));
      if (!card) this.fail(req, 404);
      return { ...card };
    }
    const comment = req.method === 'POST' ? /^\/api\/card\/([^/]+)\/comment$/.exec(req.path) : null;
    if (comment) {
      const { content } = req.body as { content: string };
      return { id: `cm${this.nextId++}`, userId: 'u1', content, seenByUsers: [], userName: 'Sim', createdAt: new Date(this.clock.now()).toISOString() };
    }
    if (req.method === 'GET') {
      if (req.path.endsWith('/schema')) return ['Name', 'Status', 'Owner', 'Priority'].map((name) => ({ name, uuid: name }));
      const size = this.opts.pageSize ?? 50;
      const page = Number((req.query instanceof URLSearchParams ? req.query.get('page') : req.query?.page) ?? 0);
      return this.cards.slice(page * size, page * size + size).map((c) => ({ ...c }));
    }
    const body = { ...(req.body as Record<string, unknown>) };
    const id = body._id;
    if (typeof id === 'string' && this.opts.updateMode !== 'Always Create New') {
      const card = this.cards.find((c) => c._id === id);
      if (card) {
        Object.assign(card, body);
        return { ...card };
      }
    }
    const card: Card = { ...body, _id: `sim${this.nextId++}` };
    this.cards.push(card);
    return { ...card };
  }
}

/** An Api over the fake service through the real retry wrapper and rate gate, as createHttp composes them. */
export function simApi(service: SimService, clock: SimClock, fixedRate?: number, retry: Omit<RetryOptions, 'clock'> = {}): ApiClient {
  const pacer = new Pacer({ clock, fixedRate });
  const send = withRetry(withPacer(service.send, pacer), { ...retry, clock });
  const http: Http = {
    send,
    pacer,
    baseUrl: 'http://sim.invalid',
    get: async (path, query, extra) => (await send({ ...extra, method: 'GET', path, query })).body,
    post: async (path, body, extra) => (await send({ ...extra, method: 'POST', path, body })).body,
  };
  const ctx = createContext({ env: {}, clock });
  return apiOver(http, { id: 'b', baseUrl: http.baseUrl, sources: { id: 'flag', baseUrl: 'flag', token: 'flag' } }, ctx);
}
