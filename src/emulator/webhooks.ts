import http from 'node:http';
import https from 'node:https';
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
 * Delivers card changes to each board's Webhook URL (spec 6): one queue per board so deliveries keep
 * their order, retried without limit until a 200, never awaited by the API.
 */
export class WebhookSender {
  private readonly queues = new Map<string, BoardQueue>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly inFlight = new Set<http.ClientRequest>();
  private readonly httpAgent = new http.Agent({ keepAlive: true });
  private readonly httpsAgent = new https.Agent({ keepAlive: true });
  private closed = false;

  constructor(
    private readonly target: (boardId: string) => WebhookTarget,
    private readonly retryCapMs: number,
    private readonly timeoutMs: number,
  ) {}

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
    for (const t of this.timers) clearTimeout(t);
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
      let backoff = Math.min(FIRST_BACKOFF_MS, this.retryCapMs);
      for (;;) {
        const { url, signingKey } = this.target(boardId);
        if (url === null || this.closed) break;
        queue.stats.attempts++;
        // Spec 6: only a 200 counts as delivered; anything else (or no answer in time) is retried.
        if ((await this.send(url, signingKey, payload)) === 200) break;
        if (this.closed) break;
        await this.sleep(backoff);
        backoff = Math.min(backoff * 2, this.retryCapMs);
      }
      if (this.closed) break;
      queue.payloads.shift();
      queue.stats.pending--;
      if (this.target(boardId).url !== null) queue.stats.delivered++;
    }
    queue.running = false;
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        resolve();
      }, ms);
      this.timers.add(timer);
    });
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
