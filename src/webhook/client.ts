import type { Agent, Dispatcher } from 'undici';
import { loadUndici } from '../http/load-undici.js';
import { type Duration, formatDuration } from '../units.js';
import { scrubSecret } from '../redact.js';
import { isSigningHeader } from './delivery.js';

/** The receiver's answer to one delivery, or the network failure that stood in for it. */
export interface Answer {
  /** HTTP status; undefined when no answer came (refused, reset, timed out). */
  status?: number;
  /** Milliseconds from the request being written (on a connected socket) to the end of the answer. */
  ms: number;
  /** The answer's body (capped), empty on failure. */
  body: Buffer;
  /** Network error code or message when no answer came (ECONNREFUSED, timeout…). */
  error?: string;
}

export interface SendRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: Buffer;
  /** The whole request's limit, shown in the error as the user wrote it. */
  timeout: Duration;
  signal?: AbortSignal;
}

/** Most of an answer's body kept: enough to show its start, never an unbounded read. */
const MAX_ANSWER_BYTES = 64 * 1024;

/**
 * The answer without the signing key this request carried: a receiver that echoes it ("wrong key …")
 * must not put it on the terminal. Only the answer's start is ever shown, always as UTF-8 text.
 */
function withoutKey(body: Buffer, headers: Record<string, string>): Buffer {
  for (const [name, key] of Object.entries(headers)) {
    if (isSigningHeader(name) && key !== '' && body.includes(key)) return Buffer.from(scrubSecret(body.toString('utf8'), key), 'utf8');
  }
  return body;
}

export interface DeliveryClientOptions {
  /** The clock answers are timed with (default performance.now); tests pass a fake one. */
  now?: () => number;
  /** Where undici comes from (default: loaded on first use); tests count its cost as setup. */
  load?: () => Promise<typeof import('undici')>;
}

/** The request option holding the callback that marks the moment the request is written. */
const WRITTEN = Symbol('cardboard.written');

/**
 * An interceptor that calls `opts[WRITTEN]()` when undici hands the request to a connected socket (onConnect
 * in undici's own HTTP/1 writer, or onRequestStart), so an answer's time leaves out loading undici, making
 * the agent, DNS and the TCP/TLS connect: what a receiver is judged by is how fast it answers a request.
 */
function markWritten(dispatch: Dispatcher['dispatch']): Dispatcher['dispatch'] {
  return (opts, handler) => {
    const mark = (opts as { [WRITTEN]?: () => void })[WRITTEN];
    if (!mark) return dispatch(opts, handler);
    const timed = new Proxy(handler, {
      get(target, name) {
        const value = Reflect.get(target, name) as unknown;
        if (typeof value !== 'function') return value;
        const method = value as (...args: unknown[]) => unknown;
        if (name === 'onConnect' || name === 'onRequestStart') {
          return (...args: unknown[]) => {
            mark();
            return method.apply(target, args);
          };
        }
        return method.bind(target);
      },
    });
    return dispatch(opts, timed);
  };
}

/** Sends deliveries over one keep-alive agent (undici's request(): several times faster than its fetch on loopback). */
export class DeliveryClient {
  private agent: Dispatcher | undefined;
  private plain: Agent | undefined;
  private undici: typeof import('undici') | undefined;
  private readonly now: () => number;
  private readonly load: () => Promise<typeof import('undici')>;

  constructor(
    private readonly connections = 1,
    opts: DeliveryClientOptions = {},
  ) {
    this.now = opts.now ?? (() => performance.now());
    this.load = opts.load ?? loadUndici;
  }

  /**
   * Send one request with the exact body bytes; never throws for an HTTP or network failure. The answer's
   * `ms` runs from the request being written to the last byte of the answer (not from this call,
   * which also loads undici and connects); a failure before anything was written is timed from the call.
   */
  async send(req: SendRequest): Promise<Answer> {
    const called = this.now();
    let written: number | undefined;
    const since = () => this.now() - (written ?? called);
    const timeout = AbortSignal.timeout(req.timeout.ms);
    const signal = req.signal ? AbortSignal.any([req.signal, timeout]) : timeout;
    try {
      // undici is loaded on first use, keeping its ~120 ms import off the --help path.
      this.undici ??= await this.load();
      // No redirects are followed: a redirect would carry x-signingKey to another origin (undici forwards custom headers on redirects).
      this.plain ??= new this.undici.Agent({ connections: this.connections });
      this.agent ??= this.plain.compose(markWritten);
      const res = await this.undici.request(req.url, {
        dispatcher: this.agent,
        // Read by markWritten; undici ignores options it does not know.
        ...{ [WRITTEN]: () => (written ??= this.now()) },
        method: req.method as 'POST',
        headers: req.headers,
        body: req.method === 'GET' || req.method === 'HEAD' ? undefined : req.body,
        signal,
      });
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        if (size < MAX_ANSWER_BYTES) chunks.push(chunk);
        size += chunk.length;
      }
      const body = withoutKey(Buffer.concat(chunks).subarray(0, MAX_ANSWER_BYTES), req.headers);
      return { status: res.statusCode, ms: since(), body };
    } catch (err) {
      const e = err as { code?: string; name?: string; message?: string };
      const error = timeout.aborted ? `timed out after ${formatDuration(req.timeout)}` : (e.code ?? e.name ?? String(err));
      return { ms: since(), body: Buffer.alloc(0), error };
    }
  }

  /** Close the agent's connections. */
  async close(): Promise<void> {
    await this.plain?.close();
  }
}
