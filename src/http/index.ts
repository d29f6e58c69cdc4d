import type { Agent } from 'undici';
import { type Context, redact } from '../context.js';
import { createCore, type HttpRequest, type Send } from './core.js';
import { withDebugLog } from './debug-log.js';
import { loadUndici } from './load-undici.js';
import { createRateLimiter, type RateLimiter, withRateLimit } from './rate-limit.js';
import { type RetryPolicy, withRetry } from './retry.js';
import { checkBaseUrl } from './url.js';

export type { HttpRequest, HttpResponse, Send } from './core.js';
export type { RateLimiter } from './rate-limit.js';
export { classifyFailure, type FailureKind, type RetryPolicy } from './retry.js';
export { path } from './url.js';

/** Defaults suited to a CLI: 10 s to connect, 30 s for headers and for the body (undici's own are 300 s). */
export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
export const DEFAULT_TIMEOUT_MS = 30_000;
/** A response bigger than this fails while reading instead of exhausting memory (PITFALLS: no limit by default). */
export const MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

let limiter: RateLimiter | undefined;

/** The one rate limiter of the process: every request of every client waits on it. */
export function processLimiter(): RateLimiter {
  limiter ??= createRateLimiter();
  return limiter;
}

let agent: Agent | undefined;
let agentUsers = 0;

/** The one keep-alive dispatcher of the process, created on first use and closed by the last user. */
async function acquireAgent(connectTimeoutMs: number): Promise<Agent> {
  const { Agent } = await loadUndici();
  agent ??= new Agent({ connect: { timeout: connectTimeoutMs }, maxResponseSize: MAX_RESPONSE_BYTES, keepAliveTimeout: 10_000 });
  agentUsers++;
  return agent;
}

async function releaseAgent(): Promise<void> {
  agentUsers = Math.max(0, agentUsers - 1);
  if (agentUsers === 0 && agent) {
    const closing = agent;
    agent = undefined;
    await closing.close();
  }
}

/** Where to send and how: base URL, token, and the tuning knobs the global options set. */
export interface HttpOptions {
  baseUrl: string;
  token: string;
  insecure?: boolean;
  timeoutMs?: number;
  connectTimeoutMs?: number;
  retry?: Partial<RetryPolicy>;
  /** Receives one line per try and per retry (only with --verbose); already redacted. */
  log?: (line: string) => void;
}

/** A configured client: `send` through every wrapper, JSON helpers, the shared limiter, and close(). */
export interface Http {
  send: Send;
  get(path: string, query?: HttpRequest['query'], opts?: Partial<HttpRequest>): Promise<unknown>;
  post(path: string, body: unknown, opts?: Partial<HttpRequest>): Promise<unknown>;
  readonly limiter: RateLimiter;
  readonly baseUrl: string;
  close(): Promise<void>;
}

/**
 * Build the client: retry → rate limit → debug log → core, so every try waits its turn and is
 * logged. The base URL is checked first (plain http:// off loopback needs --insecure).
 */
export async function createHttp(opts: HttpOptions): Promise<Http> {
  const baseUrl = checkBaseUrl(opts.baseUrl, opts.insecure);
  const timeout = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const dispatcher = await acquireAgent(opts.connectTimeoutMs ?? Math.min(timeout, DEFAULT_CONNECT_TIMEOUT_MS));
  const limiter = processLimiter();
  let send: Send = createCore({ baseUrl, token: opts.token, dispatcher, headersTimeoutMs: timeout, bodyTimeoutMs: timeout });
  if (opts.log) send = withDebugLog(send, opts.log);
  send = withRateLimit(send, limiter);
  send = withRetry(send, {
    policy: opts.retry,
    onRetry: ({ err, attempt, delayMs }) => {
      // A 429 means the whole token is over its limit: hold every request, not just this one.
      if (err.status === 429) limiter.pause(delayMs);
      opts.log?.(`retry #${attempt} of ${err.method} ${err.url} in ${delayMs} ms after ${err.status ?? err.code}`);
    },
  });
  let closed = false;
  return {
    send,
    limiter,
    baseUrl,
    get: async (path, query, extra) => (await send({ ...extra, method: 'GET', path, query })).body,
    post: async (path, body, extra) => (await send({ ...extra, method: 'POST', path, body })).body,
    async close() {
      if (closed) return;
      closed = true;
      await releaseAgent();
    },
  };
}

/** HttpOptions from the global flags: --timeout, --rate (applied to the process limiter), --verbose, --insecure. */
export function httpOptionsFromContext(ctx: Context): Pick<HttpOptions, 'insecure' | 'timeoutMs' | 'log'> {
  const g = ctx.globals;
  if (g.rate !== undefined) processLimiter().setRate(g.rate);
  return {
    insecure: Boolean(g.insecure),
    timeoutMs: g.timeout,
    log: g.verbose ? (line) => ctx.stderr.write(`${redact(ctx, `[http] ${line}`)}\n`) : undefined,
  };
}
