import type { Dispatcher } from 'undici';
import { type Clock, realClock } from '../clock.js';
import { type CoreOptions, createCore, type HttpRequest, type Send } from './core.js';
import { withDebugLog } from './debug-log.js';
import { loadUndici } from './load-undici.js';
import { type Pacer, withPacer } from './pacer.js';
import type { RetryLimits } from './command-policy.js';
import { withRetry } from './retry.js';
import { checkBaseUrl } from './url.js';

export type { HttpMethod, HttpRequest, HttpResponse, Send } from './core.js';
export { Pacer } from './pacer.js';
export type { RetryLimits } from './command-policy.js';
export type { RetryPolicy } from './retry.js';
export { path } from './url.js';
export { bodySizeNote, namingBodySize } from './error-words.js';

/** Defaults suited to a CLI: 10 s to connect, 30 s for headers and for the body (undici's own are 300 s). */
const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
export const DEFAULT_TIMEOUT_MS = 30_000;
/** A response bigger than this fails while reading instead of exhausting memory (undici has no size limit unless maxResponseSize is set). */
const MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

/** A keep-alive dispatcher for one run's clients (undici is loaded here, on first use); the caller closes it. */
export async function createDispatcher(timeoutMs = DEFAULT_TIMEOUT_MS): Promise<Dispatcher> {
  const { Agent } = await loadUndici();
  const connect = { timeout: Math.min(timeoutMs, DEFAULT_CONNECT_TIMEOUT_MS) };
  return new Agent({ connect, maxResponseSize: MAX_RESPONSE_BYTES, keepAliveTimeout: 10_000 });
}

/** Where to send and how: base URL, token, the run's dispatcher and rate gate, and the global options' knobs. */
interface HttpOptions {
  baseUrl: string;
  token: string;
  dispatcher: Dispatcher;
  /** The rate gate every try passes; shared by the clients of one run. */
  pacer: Pacer;
  insecure?: boolean;
  timeoutMs?: number;
  /** The limits of the client's default policy, a command's (a request may bring its own policy). */
  retry?: Partial<RetryLimits>;
  clock?: Clock;
  /** Receives one line per try and per retry (only with --verbose). */
  log?: (line: string) => void;
  /** Hints for a refused token (401/403) naming where it came from. */
  hints?: CoreOptions['hints'];
  /** Receives the line a person reads before each wait for a rate limit (429, 503 with Retry-After). */
  notice?: (line: string) => void;
  /** The run's "stop now": every request that names no signal of its own ends with it (CancelledError). */
  signal?: AbortSignal;
}

/** What a caller adds to a request: how it is repeated and what ends it. */
type RequestOptions = Pick<HttpRequest, 'retrySafe' | 'retry' | 'maxTries' | 'signal' | 'waitSignal'>;

/**
 * A request with the caller's options, copied field by field: an import posts every row through here,
 * and copying them with a spread cost more than the rest of this layer.
 */
function request(method: HttpRequest['method'], path: string, query: HttpRequest['query'], body: unknown, o: RequestOptions | undefined): HttpRequest {
  if (o === undefined) return { method, path, query, body };
  return { method, path, query, body, retrySafe: o.retrySafe, retry: o.retry, maxTries: o.maxTries, signal: o.signal, waitSignal: o.waitSignal };
}

/** A configured client: `send` through every wrapper, JSON helpers, and its rate gate. */
export interface Http {
  send: Send;
  get(path: string, query?: HttpRequest['query'], opts?: RequestOptions): Promise<unknown>;
  post(path: string, body: unknown, opts?: RequestOptions): Promise<unknown>;
  readonly pacer: Pacer;
  readonly baseUrl: string;
}

/**
 * Build the client: retry → pacer → debug log → core, so every try waits its turn and is logged.
 * The base URL is checked first (plain http:// off loopback needs --insecure).
 */
export function createHttp(opts: HttpOptions): Http {
  const baseUrl = checkBaseUrl(opts.baseUrl, opts.insecure);
  const timeout = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const clock = opts.clock ?? realClock;
  let send: Send = createCore({ baseUrl, token: opts.token, dispatcher: opts.dispatcher, headersTimeoutMs: timeout, bodyTimeoutMs: timeout, now: clock.now, hints: opts.hints });
  if (opts.log) send = withDebugLog(send, opts.log, clock.now);
  send = withPacer(send, opts.pacer);
  send = withRetry(send, {
    limits: opts.retry,
    clock,
    onRetry: ({ err, attempt, delayMs }) => opts.log?.(`retry #${attempt} of ${err.method} ${err.url} in ${delayMs} ms after ${err.status ?? err.code}`),
    onWait: opts.notice,
  });
  const runSignal = opts.signal;
  if (runSignal) {
    const wrapped = send;
    send = (req) => wrapped(req.signal ? req : { ...req, signal: runSignal });
  }
  return {
    send,
    pacer: opts.pacer,
    baseUrl,
    get: async (path, query, extra) => (await send(request('GET', path, query, undefined, extra))).body,
    post: async (path, body, extra) => (await send(request('POST', path, undefined, body, extra))).body,
  };
}
