import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { signingKeyMatches } from './compare.js';
import { type Delivery, headersFromRaw } from './delivery.js';
import { type ForwardEvent, Forwarder } from './forwarder.js';
import type { RecordFile } from './record-file.js';

/** Why a request got no 200: not our path, no/wrong key, too big, or the record file could not be written. */
export type RejectStatus = 404 | 403 | 413 | 500;

/** What the listener reports; it never prints (STYLE: webhook/ engine, rendered by the command). */
export type ListenerEvent =
  | { type: 'listening'; url: string }
  | { type: 'delivery'; delivery: Delivery }
  | { type: 'rejected'; status: RejectStatus; reason: string; method: string; path: string; total: number }
  | { type: 'error'; message: string }
  | ForwardEvent;

export interface ListenerOptions {
  host: string;
  port: number;
  /** Only this path is served; anything else is 404. */
  path: string;
  /** The expected x-signingKey; undefined: no verification (--no-verify). */
  key: string | undefined;
  maxBody: number;
  /** Each verified delivery is appended here before its 200 (issue 5 §2). */
  record?: RecordFile;
  /** Forward every verified delivery to the app; needs `record`. */
  forward?: { url: string; timeoutMs: number; retryCapMs?: number; memoryCount?: number };
  onEvent: (e: ListenerEvent) => void;
}

/** Counters for the status line and the summary. */
export interface ListenerStats {
  delivered: number;
  rejected: Record<RejectStatus, number>;
}

/** A webhook receiver on node:http: verify, record, answer 200 at once, then hand over to the forwarder. */
export class Listener {
  readonly stats: ListenerStats = { delivered: 0, rejected: { 403: 0, 404: 0, 413: 0, 500: 0 } };
  readonly forwarder: Forwarder | undefined;
  private readonly server: Server;
  private inFlight = 0;
  private drained: (() => void) | undefined;
  private seq = 0;

  constructor(private readonly opts: ListenerOptions) {
    if (opts.forward && !opts.record) throw new Error('forwarding needs a record file');
    this.forwarder = opts.forward && opts.record ? new Forwarder({ ...opts.forward, key: opts.key, record: opts.record, onEvent: opts.onEvent }) : undefined;
    this.seq = opts.record?.lastSeq ?? 0;
    this.server = createServer((req, res) => this.handle(req, res));
    // `Expect: 100-continue`: refuse (403/404/413) before the client sends the body, else invite it.
    this.server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
      if (!this.check(req)) res.writeContinue();
      this.handle(req, res);
    });
  }

  /** Start listening; resolves with the URL to paste into Card Sources (spec 2.4, Webhook URL). */
  async start(): Promise<string> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.opts.port, this.opts.host, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    const { port } = this.server.address() as AddressInfo;
    const host = this.opts.host.includes(':') ? `[${this.opts.host}]` : this.opts.host;
    const url = `http://${host}:${port}${this.opts.path}`;
    this.opts.onEvent({ type: 'listening', url });
    this.forwarder?.start();
    return url;
  }

  /** Stop accepting, let requests in flight finish, flush the record file, stop forwarding. */
  async stop(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeIdleConnections();
    // Requests in flight get to finish (their senders may already hold a 200), but a sender that stalls
    // mid-body cannot hold the shutdown for ever: after 10 s its connection is dropped, unanswered.
    if (this.inFlight > 0) await Promise.race([new Promise<void>((resolve) => (this.drained = resolve)), sleep(10_000, undefined, { ref: false })]);
    this.server.closeAllConnections();
    await closed;
    await this.opts.record?.flush();
    await this.forwarder?.stop();
    await this.opts.record?.close();
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    this.inFlight++;
    res.once('close', () => {
      if (--this.inFlight === 0) this.drained?.();
    });
    const target = req.url ?? '/';
    const method = req.method ?? 'POST';
    const refusal = this.check(req);
    if (refusal) {
      this.reject(req, res, refusal[0], refusal[1]);
      return;
    }
    const { maxBody } = this.opts;
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBody && !over) {
        over = true;
        this.reject(req, res, 413, `body over ${maxBody} bytes`);
      }
      if (!over) chunks.push(chunk);
    });
    req.on('end', () => {
      if (!over) this.accept(req, res, method, target, Buffer.concat(chunks, size));
    });
  }

  /** Why the request is refused before its body is read, if it is. */
  private check(req: IncomingMessage): [RejectStatus, string] | undefined {
    const { key, maxBody, path } = this.opts;
    if ((req.url ?? '/').split('?')[0] !== path) return [404, 'not the webhook path'];
    const header = req.headers['x-signingkey'];
    // Spec 6 / 7: a mismatch is answered 403; nothing of it is printed, recorded or forwarded.
    if (key !== undefined && !signingKeyMatches(header, key)) return [403, header === undefined ? 'no x-signingKey header' : 'wrong x-signingKey'];
    if (Number(req.headers['content-length']) > maxBody) return [413, `body over ${maxBody} bytes`];
    return undefined;
  }

  private accept(req: IncomingMessage, res: ServerResponse, method: string, path: string, body: Buffer): void {
    const base = { receivedAt: new Date().toISOString(), method, path, headers: headersFromRaw(req.rawHeaders), body };
    let delivery: Delivery;
    let offset = 0;
    try {
      // Written (writeSync) before the 200: a delivery the service holds as delivered is never only in memory.
      if (this.opts.record) ({ delivery, offset } = this.opts.record.append(base));
      else delivery = { seq: ++this.seq, ...base };
    } catch (err) {
      // Not acknowledged, so the service sends it again (spec 6: anything but 200 is retried).
      this.opts.onEvent({ type: 'error', message: `cannot write the record file: ${(err as Error).message}` });
      this.reject(req, res, 500, 'record file not writable');
      return;
    }
    // Spec 6: answer 200 at once; printing and forwarding come after.
    res.writeHead(200, { 'content-type': 'text/plain' }).end('OK\n');
    this.stats.delivered++;
    this.opts.onEvent({ type: 'delivery', delivery });
    this.forwarder?.enqueue(delivery, offset);
  }

  private reject(req: IncomingMessage, res: ServerResponse, status: RejectStatus, reason: string): void {
    const total = ++this.stats.rejected[status];
    // A 413 body may be huge: close the connection instead of reading the rest.
    const headers: Record<string, string> = { 'content-type': 'text/plain', ...(status === 413 ? { connection: 'close' } : {}) };
    res.writeHead(status, headers).end(`${reason}\n`);
    req.resume();
    this.opts.onEvent({ type: 'rejected', status, reason, method: req.method ?? '', path: req.url ?? '', total });
  }
}
