import http from 'node:http';
import https from 'node:https';
import { setMaxListeners } from 'node:events';
import { type Clock, realClock } from '../clock.js';
import type { WebhookStats } from './types.js';

/** Where and how a board's webhooks go, read at each try (so a changed URL takes effect). */
interface WebhookTarget {
  url: string | null;
  signingKey: string;
}

interface BoardQueue {
  payloads: string[];
  running: boolean;
  stats: WebhookStats;
}

/** First wait after a failed try; doubled per failure up to the cap. */
const FIRST_BACKOFF_MS = 500;

/**
 * Default cap of that wait. The service retries without limit at its own spacing (spec 6 gives no cap);
 * the emulator is a development tool, so a receiver that was down (a listener restarted) gets the next
 * try within a few seconds instead of half a minute later.
 */
export const DEFAULT_RETRY_CAP_MS = 2000;

/** One try: POST the payload with the key; resolves with the status, or 0 on a network error or timeout. */
export type PostHook = (url: string, signingKey: string, payload: string) => Promise<number>;

/** How a sender waits and sends; each has a default. */
interface SenderOptions {
  /** Cap of the backoff between tries of one delivery (default DEFAULT_RETRY_CAP_MS). */
  retryCapMs?: number;
  /** How long a receiver may take to answer (default 60 s, spec 6). */
  timeoutMs?: number;
  /** The waits between tries (default realClock; tests pass a simulated clock). */
  timers?: Pick<Clock, 'sleep'>;
  /** Replaces the HTTP POST (a test of the retry schedule). */
  post?: PostHook;
}

/** The waits between the failed tries of one delivery: 0.5 s doubled per failure, at most `capMs`. */
function backoffAfter(failures: number, capMs: number): number {
  return Math.min(FIRST_BACKOFF_MS * 2 ** Math.min(failures - 1, 30), capMs);
}

/**
 * Delivers card changes to each board's Webhook URL (spec 6): one queue per board so deliveries keep
 * their order, retried without limit until a 200, never awaited by the API.
 */
export class WebhookSender {
  private readonly queues = new Map<string, BoardQueue>();
  private readonly stop = new AbortController();
  private readonly inFlight = new Set<http.ClientRequest>();
  private readonly httpAgent = new http.Agent({ keepAlive: true });
  private readonly httpsAgent = new https.Agent({ keepAlive: true });
  private closed = false;
  private readonly retryCapMs: number;
  private readonly timeoutMs: number;
  private readonly timers: Pick<Clock, 'sleep'>;
  private readonly post: PostHook;

  constructor(
    private readonly target: (boardId: string) => WebhookTarget,
    opts: SenderOptions = {},
  ) {
    this.retryCapMs = opts.retryCapMs ?? DEFAULT_RETRY_CAP_MS;
    this.timeoutMs = opts.timeoutMs ?? 60_000;
    this.timers = opts.timers ?? realClock;
    this.post = opts.post ?? ((url, key, payload) => this.send(url, key, payload));
    // Each board's queue waits on this signal while it backs off: more than ten boards at once are no leak.
    setMaxListeners(0, this.stop.signal);
  }

  /** Queue a card JSON for the board; returns at once. */
  enqueue(boardId: string, payload: string): void {
    if (this.closed || this.target(boardId).url === null) return;
    const q = this.queue(boardId);
    q.payloads.push(payload);
    q.stats.pending++;
    if (!q.running) void this.drain(q, boardId);
  }

  /** Counters of one board (copies). */
  stats(boardId: string): WebhookStats {
    return { ...(this.queues.get(boardId)?.stats ?? { pending: 0, delivered: 0, attempts: 0 }) };
  }

  /** Stop: no more tries, pending deliveries are dropped. */
  close(): void {
    this.closed = true;
    this.stop.abort();
    for (const r of this.inFlight) r.destroy();
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }

  private queue(boardId: string): BoardQueue {
    let queue = this.queues.get(boardId);
    if (!queue) {
      queue = { payloads: [], running: false, stats: { pending: 0, delivered: 0, attempts: 0 } };
      this.queues.set(boardId, queue);
    }
    return queue;
  }

  private async drain(queue: BoardQueue, boardId: string): Promise<void> {
    queue.running = true;
    while (!this.closed && queue.payloads.length > 0) {
      const payload = queue.payloads[0]!;
      for (let failures = 1; ; failures++) {
        const { url, signingKey } = this.target(boardId);
        if (url === null || this.closed) break;
        queue.stats.attempts++;
        // Spec 6: only a 200 counts as delivered; anything else (or no answer in time) is retried.
        if ((await this.post(url, signingKey, payload)) === 200) break;
        if (this.closed) break;
        await this.timers.sleep(backoffAfter(failures, this.retryCapMs), this.stop.signal);
      }
      if (this.closed) break;
      queue.payloads.shift();
      queue.stats.pending--;
      if (this.target(boardId).url !== null) queue.stats.delivered++;
    }
    queue.running = false;
  }

  /** One try: the status, or 0 on a network error or timeout. */
  private send(url: string, signingKey: string, payload: string): Promise<number> {
    return new Promise((resolve) => {
      const secure = url.startsWith('https:');
      const req = (secure ? https : http).request(url, {
        method: 'POST',
        agent: secure ? this.httpsAgent : this.httpAgent,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(payload),
          // Spec 6: the signing key exactly as configured, compared by plain string equality.
          'x-signingKey': signingKey,
        },
        timeout: this.timeoutMs,
      });
      this.inFlight.add(req);
      const done = (status: number) => {
        this.inFlight.delete(req);
        resolve(status);
      };
      req.on('response', (res) => {
        res.resume();
        res.on('end', () => done(res.statusCode ?? 0));
        res.on('error', () => done(0));
      });
      req.on('timeout', () => req.destroy());
      req.on('error', () => done(0));
      req.end(payload);
    });
  }
}
