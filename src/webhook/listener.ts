import { childStop } from '../interrupt.js';
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { type Clock, realClock } from '../clock.js';
import { keyMatcher } from './compare.js';
import { type Delivery, headersFromRaw, rawHeader, scrubBody, scrubHeaders, secretNeedles } from './delivery.js';
import { type ForwardEntry, forwardEntry } from './forward-entry.js';
import { type ForwardEvent, Forwarder } from './forwarder.js';
import { LARGE_BODY } from './large-lines.js';
import { type ConnectionLimits, DEFAULT_LIMITS, FORWARDED_HEADER, hasForwarded, reachesListener } from './limits.js';
import type { Recorded, RecordFile } from './record-file.js';
import type { Duration } from '../units.js';

/** Why a request got no 200: not our path, not a POST, no/wrong key, too big, or the record file could not be written. */
type RejectStatus = 404 | 405 | 403 | 413 | 500;

/** What the listener reports; it never prints: the command renders these events. */
export type ListenerEvent =
  | { type: 'listening'; url: string }
  /** `view`: the delivery's `--json` line when recording made it already (a small body), so it is not built twice. */
  | { type: 'delivery'; delivery: Delivery; view?: string }
  | { type: 'rejected'; status: RejectStatus; reason: string; method: string; path: string; total: number }
  | { type: 'error'; message: string }
  /** A verified delivery that this listener forwarded itself and that came back: answered 200, not recorded again. */
  | { type: 'looped'; path: string }
  /** A forward try, with the entry the record file got for it (the app's answer, bounded, without the secrets). */
  | (ForwardEvent & { entry: ForwardEntry });

/**
 * Where a mirror applies each verified delivery: after it is recorded, before its 200, one batch (the
 * deliveries of one event-loop turn) at a time, in order. A hook that throws is treated as a record file
 * that cannot be written: the batch is answered 500, and the service sends it again.
 */
export interface DeliveryHook {
  apply(deliveries: readonly Delivery[]): void;
}

export interface ListenerOptions {
  host: string;
  port: number;
  /** Only this path is served; anything else is 404. */
  path: string;
  /** The expected x-signingKey; undefined: no verification (--no-verify). */
  key: string | undefined;
  /** Secrets (the key, the token) replaced by `***` wherever they occur in a delivery, before it is kept anywhere. */
  secrets?: readonly string[];
  maxBody: number;
  /** Each verified delivery is appended here before its 200, so an acknowledged delivery survives a crash. */
  record?: RecordFile;
  /** Forward every verified delivery to the app; needs `record`. */
  forward?: ForwardRoute;
  /** Instead of `forward`: one forwarder per route (--forward-to given with filters, or more than once); needs `record`. */
  routes?: readonly ForwardRoute[];
  /** Connection cap and timeouts (default DEFAULT_LIMITS). */
  limits?: Partial<ConnectionLimits>;
  /** Applied to each verified delivery before its 200 (see DeliveryHook). */
  mirror?: DeliveryHook;
  /** Each delivery's receivedAt, and the wait for requests in flight at shutdown (default realClock). */
  clock?: Clock;
  /**
   * Told of each event once the listener is done with it (a delivery after its 200). A throw here, or a
   * promise returned that rejects, is the handler's own failure: the listener goes on answering, recording
   * and forwarding, and reports the first such failure as an 'error' event.
   */
  onEvent: (e: ListenerEvent) => void;
}

/** Where a forwarder sends deliveries: its URL, its own ack log and which deliveries it takes (Forwarder's options). */
export interface ForwardRoute {
  url: string;
  timeout: Duration;
  retryCapMs?: number;
  memoryCount?: number;
  memoryBytes?: number;
  cursor?: string;
  takes?: (delivery: Delivery) => boolean;
  taken?: (afterSeq: number, lastSeq: number) => number;
}

/**
 * The 200's headers, built once. Content-Length is given because writeHead() sends the head before end()
 * knows the body: without it every answer is chunked, three extra writes per delivery.
 */
const OK_BODY = 'OK\n';
const OK_HEADERS = { 'content-type': 'text/plain', 'content-length': String(OK_BODY.length) };

/** A verified request whose body is in, waiting for the end of the event-loop turn to be recorded and answered. */
interface Accepted {
  res: ServerResponse;
  delivery: Omit<Delivery, 'seq'>;
}

/**
 * The header of cardboard's own test delivery through a tunnel (the reachability check), carrying a random
 * token this listener issued: answered 200 and counted as arrived, never printed, recorded or forwarded.
 * A value the listener did not issue is an ordinary header of an ordinary delivery.
 */
export const CHECK_HEADER = 'x-cardboard-check';

/** Check tokens remembered after their wait ended, so a late one is still not taken for a delivery. */
const SPENT_CHECKS = 64;

/** Counters for the status line and the summary. */
export interface ListenerStats {
  delivered: number;
  rejected: Record<RejectStatus, number>;
}

/** Requests refused so far, whatever the status. */
export function refusedTotal(stats: ListenerStats): number {
  return Object.values(stats.rejected).reduce((sum, n) => sum + n, 0);
}

/** A webhook receiver on node:http: verify, record, answer 200 at once, then hand over to the forwarder. */
export class Listener {
  readonly stats: ListenerStats = { delivered: 0, rejected: { 403: 0, 404: 0, 405: 0, 413: 0, 500: 0 } };
  /** The first route's forwarder (the only one without routes). */
  readonly forwarder: Forwarder | undefined;
  /** One per route, in the order given. */
  readonly forwarders: readonly Forwarder[];
  /** Where the forwarders send: `routes`, or the one `forward`, or none. */
  private readonly routes: readonly ForwardRoute[];
  /** This listener's id in x-cardboard-forwarded: what it forwards carries it, so it knows it if it comes back. */
  readonly id = randomBytes(8).toString('hex');
  private readonly server: Server;
  private readonly limits: ConnectionLimits;
  /** Open connections, oldest first, each with the number of its requests in progress (0: idle). */
  private readonly sockets = new Map<Socket, number>();
  private inFlight = 0;
  private drained: (() => void) | undefined;
  private seq = 0;
  private readonly keyMatches: ((header: string | undefined) => boolean) | undefined;
  private accepted: Accepted[] = [];
  private stopping: Promise<void> | undefined;
  private readonly secrets: string[];
  private readonly needles: Buffer[];
  /** Test deliveries expected (token → arrived), and tokens of recent ones whose wait is over. */
  private readonly checks = new Map<string, () => void>();
  private readonly spentChecks = new Set<string>();
  /** The last receivedAt made, and the millisecond it is for: many deliveries arrive within one. */
  private clockMs = Number.NaN;
  private clockIso = '';
  /** Whether onEvent has failed once: only the first failure is reported. */
  private handlerFailed = false;
  /** Whether a forward entry could not be written once: only the first failure is reported. */
  private forwardWriteFailed = false;

  constructor(private readonly opts: ListenerOptions) {
    this.routes = opts.routes ?? (opts.forward ? [opts.forward] : []);
    if (this.routes.length > 0 && !opts.record) throw new Error('forwarding needs a record file');
    const record = opts.record!;
    this.forwarders = this.routes.map((route) => new Forwarder({ ...route, key: opts.key, record, onEvent: (e) => this.forwarded(e), forwardedBy: this.id, clock: opts.clock }));
    this.forwarder = this.forwarders[0];
    this.seq = opts.record?.lastSeq ?? 0;
    this.keyMatches = opts.key === undefined ? undefined : keyMatcher(opts.key);
    this.secrets = [...new Set([...(opts.key === undefined ? [] : [opts.key]), ...(opts.secrets ?? [])])].filter((k) => k !== '');
    this.needles = secretNeedles(this.secrets);
    const limits = { ...DEFAULT_LIMITS, ...opts.limits };
    this.limits = limits;
    this.server = createServer(
      {
        // Node's defaults (60 s for headers, 300 s for a request, checked every 30 s) let a silent or trickling
        // connection live 88-330 s; these bounds are checked often enough to hold.
        headersTimeout: limits.headersMs,
        requestTimeout: limits.requestMs,
        keepAliveTimeout: limits.idleMs,
        connectionsCheckingInterval: Math.max(10, Math.min(1000, Math.floor(limits.headersMs / 4))),
      },
      (req, res) => this.handle(req, res),
    );
    // No activity for idleMs closes the socket (no 'timeout' listener: Node destroys it).
    this.server.setTimeout(limits.idleMs);
    this.server.on('connection', (socket: Socket) => this.admit(socket));
    // `Expect: 100-continue`: refuse (403/404/413) before the client sends the body, else invite it.
    this.server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
      if (!this.check(req)) res.writeContinue();
      this.handle(req, res);
    });
  }

  /**
   * Start listening; resolves with the URL to paste into Card Sources (spec 2.4, Webhook URL). Throws a
   * SelfForwardError, listening no more, when --forward-to reaches this very listener (known only now with --port 0).
   */
  async start(): Promise<string> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.opts.port, this.opts.host, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    const { port } = this.server.address() as AddressInfo;
    const self = this.routes.find((route) => reachesListener(route.url, this.opts.host, port));
    if (self) {
      await new Promise<void>((resolve) => this.server.close(() => resolve()));
      throw new SelfForwardError(self.url, port);
    }
    const host = this.opts.host.includes(':') ? `[${this.opts.host}]` : this.opts.host;
    const url = `http://${host}:${port}${this.opts.path}`;
    this.emit({ type: 'listening', url });
    for (const forwarder of this.forwarders) forwarder.start();
    return url;
  }

  /** The port the listener is bound to (after start). */
  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** The host and port the listener is bound to; undefined before start and after stop. */
  get bound(): { host: string; port: number } | undefined {
    return this.server.listening ? { host: this.opts.host, port: this.port } : undefined;
  }

  /**
   * Expect one test delivery: a fresh token to send in CHECK_HEADER, and a promise that resolves when a
   * verified request carrying it arrives. `done()` ends the wait (the token is still known afterwards).
   */
  expectCheck(): { token: string; arrived: Promise<void>; done(): void } {
    const token = randomBytes(16).toString('hex');
    const arrived = new Promise<void>((resolve) => this.checks.set(token, resolve));
    const done = () => {
      if (!this.checks.delete(token)) return;
      this.spentChecks.add(token);
      if (this.spentChecks.size > SPENT_CHECKS) this.spentChecks.delete(this.spentChecks.values().next().value!);
    };
    return { token, arrived, done };
  }

  /**
   * Stop accepting, let requests in flight finish, flush the record file, stop forwarding. Idempotent.
   * `signal` (the run's "stop now") cuts the wait for requests in flight short.
   */
  stop(signal?: AbortSignal): Promise<void> {
    this.stopping ??= this.shutdown(signal);
    return this.stopping;
  }

  private async shutdown(signal?: AbortSignal): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeIdleConnections();
    // Requests in flight get to finish (their senders may already hold a 200), but a sender that stalls
    // mid-body cannot hold the shutdown for ever: after 10 s, or when the run must stop now, its
    // connection is dropped, unanswered (the service sends it again).
    if (this.inFlight > 0) {
      const timer = childStop(signal);
      await Promise.race([new Promise<void>((resolve) => (this.drained = resolve)), (this.opts.clock ?? realClock).sleep(10_000, timer.signal)]);
      timer.abort('done');
    }
    this.server.closeAllConnections();
    await closed;
    await this.opts.record?.flush();
    await Promise.all(this.forwarders.map((f) => f.stop()));
    await this.opts.record?.close();
  }

  /**
   * A new connection, counted against the cap. At the cap the oldest idle connection (none of its requests
   * in progress) makes room: idle sockets cannot starve deliveries. If every one is busy, the new one is
   * closed at once (the service retries it), never left hanging.
   */
  private admit(socket: Socket): void {
    if (this.sockets.size >= this.limits.maxConnections) {
      let idle: Socket | undefined;
      for (const [open, busy] of this.sockets) {
        if (busy === 0) {
          idle = open;
          break;
        }
      }
      if (idle === undefined) {
        socket.destroy();
        return;
      }
      this.sockets.delete(idle);
      idle.destroy();
    }
    this.sockets.set(socket, 0);
    socket.once('close', () => this.sockets.delete(socket));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    this.inFlight++;
    const socket = req.socket;
    // Busy while a request is in progress; back to the end of the line (youngest) when it is answered.
    if (this.sockets.has(socket)) this.sockets.set(socket, this.sockets.get(socket)! + 1);
    res.once('close', () => {
      const busy = this.sockets.get(socket);
      if (busy !== undefined) {
        this.sockets.delete(socket);
        if (!socket.destroyed) this.sockets.set(socket, busy - 1);
      }
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
    // A large body with its length announced is copied into one Buffer as it arrives: collecting the
    // chunks and joining them at the end would hold it twice.
    const declared = Number(rawHeader(req.rawHeaders, 'content-length'));
    let whole = declared >= LARGE_BODY && declared <= maxBody ? Buffer.allocUnsafe(declared) : undefined;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBody && !over) {
        over = true;
        this.reject(req, res, 413, `body over ${maxBody} bytes`);
      }
      if (over) return;
      if (whole && size <= whole.length) chunk.copy(whole, size - chunk.length);
      else chunks.push(chunk);
    });
    req.on('end', () => {
      if (over) return;
      // One chunk (the usual card) is already a buffer of its own: node:http copies each body chunk.
      const body = whole && chunks.length === 0 ? whole.subarray(0, size) : chunks.length === 1 ? chunks[0]! : Buffer.concat(whole ? [whole, ...chunks] : chunks, size);
      whole = undefined;
      this.accept(req, res, method, target, body);
    });
  }

  /** Why the request is refused before its body is read, if it is. */
  private check(req: IncomingMessage): [RejectStatus, string] | undefined {
    const { maxBody, path } = this.opts;
    const target = req.url ?? '/';
    const query = target.indexOf('?');
    if ((query === -1 ? target : target.slice(0, query)) !== path) return [404, 'not the webhook path'];
    // Spec 6: the service only ever POSTs a delivery; anything else is not one.
    if (req.method !== 'POST') return [405, 'only POST is a delivery'];
    const header = rawHeader(req.rawHeaders, 'x-signingkey');
    // Spec 6 / 7: a mismatch is answered 403; nothing of it is printed, recorded or forwarded.
    if (this.keyMatches && !this.keyMatches(header)) return [403, header === undefined ? 'no x-signingKey header' : 'wrong x-signingKey'];
    if (Number(rawHeader(req.rawHeaders, 'content-length')) > maxBody) return [413, `body over ${maxBody} bytes`];
    return undefined;
  }

  private accept(req: IncomingMessage, res: ServerResponse, method: string, path: string, body: Buffer): void {
    if (hasForwarded(rawHeader(req.rawHeaders, FORWARDED_HEADER), this.id)) {
      // Our own forward came back (a proxy chain, a name that resolves here): it was recorded when it first
      // arrived. 200 so the sender stops; recording or forwarding it again would loop for ever.
      res.writeHead(200, OK_HEADERS).end(OK_BODY);
      this.emit({ type: 'looped', path });
      return;
    }
    const check = rawHeader(req.rawHeaders, CHECK_HEADER);
    if (check !== undefined && (this.checks.has(check) || this.spentChecks.has(check))) {
      // Our own test delivery came through the tunnel, past the key check like any delivery.
      res.writeHead(200, OK_HEADERS).end(OK_BODY);
      this.checks.get(check)?.();
      return;
    }
    // The key and the token never reach the record file, the spool, the screen or the app:
    // x-signingKey is redacted by name, any other place they occur by value.
    const delivery = { receivedAt: this.isoNow(), method, path, headers: scrubHeaders(headersFromRaw(req.rawHeaders), this.secrets), body: scrubBody(body, this.needles) };
    // Answered at the end of this event-loop turn, with every other delivery that arrived in it: one write
    // to the record file for all of them instead of one each. setImmediate runs right after this turn's
    // I/O, so the wait is only for deliveries that are already here.
    if (this.accepted.push({ res, delivery }) === 1) setImmediate(() => this.answerAccepted());
  }

  /** Now as ISO 8601 UTC with milliseconds, made once per millisecond. */
  private isoNow(): string {
    const now = (this.opts.clock ?? realClock).now();
    if (now !== this.clockMs) {
      this.clockMs = now;
      this.clockIso = new Date(now).toISOString();
    }
    return this.clockIso;
  }

  private answerAccepted(): void {
    const batch = this.accepted;
    this.accepted = [];
    let recorded: Recorded[] | undefined;
    try {
      // Written (writeSync) before the 200s: a delivery the service holds as delivered is never only in memory.
      recorded = this.opts.record
        ? this.opts.record.appendAll(batch.map((a) => a.delivery))
        : batch.map((a) => ({ delivery: { seq: ++this.seq, ...a.delivery }, offset: 0, view: undefined }));
      this.opts.mirror?.apply(recorded.map((r) => r.delivery));
    } catch (err) {
      // Not acknowledged, so the service sends them again (spec 6: anything but 200 is retried).
      const [what, reason] = recorded === undefined ? ['cannot write the record file', 'record file not writable'] : ['cannot apply to the mirror', 'mirror not writable'];
      this.emit({ type: 'error', message: `${what}: ${(err as Error).message}` });
      for (const { res } of batch) this.reject(res.req, res, 500, reason);
      return;
    }
    // Spec 6: answer 200 at once; printing and forwarding come after.
    for (const { res } of batch) res.writeHead(200, OK_HEADERS).end(OK_BODY);
    this.stats.delivered += batch.length;
    for (const { delivery, offset, view } of recorded) {
      this.emit({ type: 'delivery', delivery, view });
      for (const forwarder of this.forwarders) forwarder.enqueue(delivery, offset);
    }
  }

  /**
   * A forward try: its entry is appended to the record file (the forwarder stops before the file is closed,
   * so none comes after), then it is told. An entry that cannot be written stops neither forwarding nor the
   * 200s: the first such failure is reported, the others only skip their entry.
   */
  private forwarded(event: ForwardEvent): void {
    const entry = forwardEntry(event, this.isoNow(), this.secrets, this.needles);
    try {
      this.opts.record?.appendForward(entry);
    } catch (err) {
      if (!this.forwardWriteFailed) this.emit({ type: 'error', message: `cannot write the app's answer to the record file (forwarding goes on; later failures are not reported): ${(err as Error).message}` });
      this.forwardWriteFailed = true;
    }
    this.emit({ ...event, entry });
  }

  /**
   * Hand `event` to onEvent, which is the caller's code (the command's renderer): its failure must not
   * skip the work left in this turn (the other deliveries' events, their forwards) nor leave the turn
   * uncaught, which would end the process. The first failure becomes an 'error' event; if the handler
   * fails at that too, it is not told again.
   */
  private emit(event: ListenerEvent): void {
    try {
      const result = this.opts.onEvent(event) as unknown;
      if (result instanceof Promise) result.catch((err: unknown) => this.onHandlerFailure(err));
    } catch (err) {
      this.onHandlerFailure(err);
    }
  }

  private onHandlerFailure(err: unknown): void {
    if (this.handlerFailed) return;
    this.handlerFailed = true;
    const message = err instanceof Error ? err.message : String(err);
    try {
      this.opts.onEvent({ type: 'error', message: `the event handler failed (${message}); deliveries are still answered, recorded and forwarded, and later failures are not reported` });
    } catch {
      // The handler cannot report its own failure either: there is no one else to tell.
    }
  }

  private reject(req: IncomingMessage, res: ServerResponse, status: RejectStatus, reason: string): void {
    const total = ++this.stats.rejected[status];
    // A 413 body may be huge, and a 405 one was never bounded: close the connection instead of reading the rest.
    const headers: Record<string, string> = { 'content-type': 'text/plain', ...(status === 413 || status === 405 ? { connection: 'close' } : {}), ...(status === 405 ? { allow: 'POST' } : {}) };
    res.writeHead(status, headers).end(`${reason}\n`);
    req.resume();
    this.emit({ type: 'rejected', status, reason, method: req.method ?? '', path: req.url ?? '', total });
  }
}

/** --forward-to names the listener itself: every delivery would come back and be forwarded again. */
export class SelfForwardError extends Error {
  constructor(
    readonly url: string,
    readonly port: number,
  ) {
    super(`--forward-to ${url} is this listener itself (port ${port})`);
  }
}
