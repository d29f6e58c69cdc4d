import type { Agent } from 'undici';
import { AbortWatch, Deadlines, dispatchRequest, MissedDeadline } from '../http/dispatch.js';
import type { HttpMethod } from '../http/index.js';
import { loadUndici } from '../http/load-undici.js';
import { type Duration, formatDuration } from '../units.js';
import { scrubBytes } from '../redact.js';
import { isSigningHeader } from './delivery.js';

/** The receiver's answer to one delivery, or the network failure that stood in for it. */
export interface Answer {
  /** HTTP status; undefined when no answer came (refused, reset, timed out). */
  status?: number;
  /** Milliseconds from the request being written (on a connected socket) to the end of the answer. */
  ms: number;
  /** The answer's body (capped), empty on failure. */
  body: Buffer;
  /** The answer's headers (names lower-case, repeated ones joined with ", "), without the signing key; absent on failure. */
  headers?: Record<string, string>;
  /** Network error code or message when no answer came (ECONNREFUSED, timeout…). */
  error?: string;
  /** The answer's Retry-After header, when it has one (the forwarder's wait honours it). */
  retryAfter?: string;
}

interface SendRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: Buffer;
  /** The whole request's limit, shown in the error as the user wrote it. */
  timeout: Duration;
  signal?: AbortSignal;
}

/** Most of an answer's body kept: enough to show its start. The rest is read and dropped, within the deadline. */
const MAX_ANSWER_BYTES = 64 * 1024;

/**
 * The answer without the signing key this request carried, scrubbed as the HTTP core scrubs the token
 * from the service's answers: a receiver that echoes it ("wrong key …") must not put it on the terminal.
 */
function withoutKey(body: Buffer, headers: Record<string, string>): Buffer {
  let out = body;
  for (const [name, key] of Object.entries(headers)) if (isSigningHeader(name)) out = scrubBytes(out, key);
  return out;
}

/** The answer's headers as text, each value scrubbed of the key the request carried (an app may echo it). */
function answerHeaders(received: Record<string, string | string[] | undefined>, sent: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(received)) {
    if (value === undefined) continue;
    out[name] = withoutKey(Buffer.from(Array.isArray(value) ? value.join(', ') : value, 'latin1'), sent).toString('latin1');
  }
  return out;
}

interface DeliveryClientOptions {
  /** The clock answers are timed with (default performance.now); tests pass a fake one. */
  now?: () => number;
  /** Where undici comes from (default: loaded on first use); tests count its cost as setup. */
  load?: () => Promise<typeof import('undici')>;
}

/**
 * Sends deliveries to the user's app over one keep-alive agent, through the dispatch of every request
 * (src/http/dispatch.ts): a deadline for the whole request, connection and answer; the answer's start kept
 * (64 KiB), the rest read and dropped; no redirect followed (a redirect would carry x-signingKey to another
 * origin). How a failed forward is tried again is the app policy's (src/http/app-policy.ts).
 */
export class DeliveryClient {
  private agent: Agent | undefined;
  private readonly now: () => number;
  private readonly load: () => Promise<typeof import('undici')>;
  private readonly watch = new AbortWatch();
  private readonly deadlines = new Deadlines();

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
    try {
      // undici is loaded on first use, keeping its import off the --help path.
      this.agent ??= new (await this.load()).Agent({ connections: this.connections });
      const url = new URL(req.url);
      const res = await dispatchRequest(this.agent, {
        origin: url.origin,
        path: url.pathname + url.search,
        method: req.method as HttpMethod,
        headers: req.headers,
        body: req.method === 'GET' || req.method === 'HEAD' ? undefined : req.body,
        headersTimeout: req.timeout.ms,
        bodyTimeout: req.timeout.ms,
        deadlineMs: req.timeout.ms,
        signal: req.signal,
        watch: this.watch,
        deadlines: this.deadlines,
        keepBytes: MAX_ANSWER_BYTES,
        onWritten: () => (written ??= this.now()),
      });
      const answer: Answer = { status: res.statusCode, ms: since(), body: withoutKey(res.body, req.headers), headers: answerHeaders(res.headers, req.headers) };
      const retryAfter = res.headers['retry-after'];
      if (retryAfter !== undefined) answer.retryAfter = Array.isArray(retryAfter) ? retryAfter[0] : retryAfter;
      return answer;
    } catch (err) {
      const e = err as { code?: string; name?: string; message?: string };
      const error = err instanceof MissedDeadline ? `timed out after ${formatDuration(req.timeout)}` : (e.code ?? e.name ?? String(err));
      return { ms: since(), body: Buffer.alloc(0), error };
    }
  }

  /** Close the agent's connections. */
  async close(): Promise<void> {
    await this.agent?.close();
  }
}
