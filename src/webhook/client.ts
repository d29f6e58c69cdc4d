import type { Agent } from 'undici';
import { loadUndici } from '../http/load-undici.js';
import { formatDuration } from '../units.js';
import { scrubSecret } from '../redact.js';
import { isSigningHeader } from './delivery.js';

/** The receiver's answer to one delivery, or the network failure that stood in for it. */
export interface Answer {
  /** HTTP status; undefined when no answer came (refused, reset, timed out). */
  status?: number;
  /** Milliseconds from sending to the end of the answer. */
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
  timeoutMs: number;
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

/** Sends deliveries over one keep-alive agent (undici request(): PITFALLS, fastest on loopback). */
export class DeliveryClient {
  private agent: Agent | undefined;
  private undici: typeof import('undici') | undefined;

  constructor(private readonly connections = 1) {}

  /** Send one request with the exact body bytes; never throws for an HTTP or network failure. */
  async send(req: SendRequest): Promise<Answer> {
    const started = performance.now();
    const timeout = AbortSignal.timeout(req.timeoutMs);
    const signal = req.signal ? AbortSignal.any([req.signal, timeout]) : timeout;
    try {
      // undici is loaded on first use, keeping it off the --help path (STYLE: heavy modules).
      this.undici ??= await loadUndici();
      // No redirects are followed: a redirect would carry x-signingKey to another origin (PITFALLS, undici).
      this.agent ??= new this.undici.Agent({ connections: this.connections });
      const res = await this.undici.request(req.url, {
        dispatcher: this.agent,
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
      return { status: res.statusCode, ms: performance.now() - started, body };
    } catch (err) {
      const e = err as { code?: string; name?: string; message?: string };
      const error = timeout.aborted ? `timed out after ${formatDuration(req.timeoutMs)}` : (e.code ?? e.name ?? String(err));
      return { ms: performance.now() - started, body: Buffer.alloc(0), error };
    }
  }

  /** Close the agent's connections. */
  async close(): Promise<void> {
    await this.agent?.close();
  }
}

/** The start of an answer's body as one short line, for display. */
export function answerStart(body: Buffer, max = 60): string {
  const text = body.toString('utf8').replace(/\s+/g, ' ').trim();
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
