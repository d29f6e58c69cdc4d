// The inspector's HTTP API. Every path is under /<token>/, the run's random token; anything else is 403.
//
//   GET  /<token>/                 index.html (also /<token> redirects here)
//   GET  /<token>/app.js           the page's script
//   GET  /<token>/style.css        the page's style sheet
//   GET  /<token>/events           server-sent events: every kept entry (`entry`, oldest first), then `ready`
//                                  {forwardTo, recording, kept, dropped}, then live `entry`, `forward`
//                                  {seq, url, attempt, ok, status|null, ms, error?} and `stats` {delivered, refused}
//   GET  /<token>/deliveries/<seq> {seq, receivedAt, method, path, headers, body, bodyTruncated?, size, change, forward?}
//                                  forward: the last try {url, attempt, ok, status|null, ms, error?, headers?, body?,
//                                  bodyTruncated?}, with the app's answer (headers, the body's first 4 KiB)
//                                  404 never kept, 410 dropped to stay in bounds
//   POST /<token>/replay           {seq, url?, headers?, body?} → {url, edited, status|null, ms, error?, headers,
//                                  body, bodyTruncated?}: that delivery sent to `url` or else --forward-to (409 when
//                                  neither), signed with the key: its exact bytes, or edited (replay.ts)
//   event `cleared` {kept, dropped} on the stream: the kept entries were forgotten (DELETE api/deliveries)
// The JSON API, for tests and scripts (docs/webhooks.md):
//   GET    /<token>/api/deliveries[?limit=N&changed=Field&where=EXPR]  {deliveries: [entry…] newest first, kept, dropped}
//   GET    /<token>/api/deliveries/<seq>          the detail, as deliveries/<seq>
//   POST   /<token>/api/deliveries/<seq>/replay   {url?, headers?, body?} → as POST replay
//   DELETE /<token>/api/deliveries                204: the kept entries are forgotten (the record file is untouched)
//
// A local page is reachable by any web page the user opens: every request passes the checks of guards.ts
// (Host, token; for an action its header, Origin and content type), and every answer carries SECURITY_HEADERS.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { DeliveryClient } from '../client.js';
import { keyMatcher } from '../compare.js';
import type { DeliveryChange } from '../changes.js';
import type { Delivery } from '../delivery.js';
import type { ForwardEntry } from '../forward-entry.js';
import type { ForwardEvent } from '../forwarder.js';
import { reachesListener } from '../limits.js';
// The check --forward-to gets, so a replay URL is held to the same rule.
import { httpUrl } from '../../http/url.js';
import { durationOf, type Duration } from '../../units.js';
import { deliveryList } from './api.js';
import { answerView, isEdited, secretFreeAnswer, type ReplayEvent, type ReplayInput, replayInput, replayRequest } from './replay.js';
import { Guards } from './guards.js';
import { asObject, ForbiddenPage, forbiddenPage, HttpError, readJson, SECURITY_HEADERS, send, seqOf, sse } from './respond.js';
import { DEFAULT_MAX_BYTES, DEFAULT_MAX_ENTRIES, EntryStore, forwardView } from './store.js';

/** The address the inspector binds, whatever the listener's --host: the page is for this machine only. */
const INSPECTOR_HOST = '127.0.0.1';

const STATIC_FILES: ReadonlyArray<[string, string]> = [
  ['index.html', 'text/html; charset=utf-8'],
  ['app.js', 'text/javascript; charset=utf-8'],
  ['style.css', 'text/css; charset=utf-8'],
];

/** A replay's action body at most: an edited body as large as the detail shows (1 MiB), escaped as JSON. */
const REPLAY_ACTION_BYTES = 4 * 1024 * 1024;
const JSON_TYPE = 'application/json; charset=utf-8';
/** A replay URL's length at most (the URL is echoed on a terminal line). */
const MAX_REPLAY_URL = 8192;
/** An event stream whose reader lags this far behind is closed (the page reconnects and gets the history again). */
const MAX_STREAM_BUFFER = 16 * 1024 * 1024;

export interface InspectorOptions {
  /** Ports to try in order; the first free one is used (0: any free port). */
  ports: number[];
  /** The signing key replays are signed with (spec 6); undefined: sent without x-signingKey. */
  key: string | undefined;
  /** Whether deliveries were checked against the key (false with --no-verify). */
  verified: boolean;
  forwardTo?: string;
  /** Whether this run records to a file. */
  recording: boolean;
  /** Allow plain http:// replays to a host that is not loopback (--insecure). */
  insecure?: boolean;
  /** How long a replay's receiver may take (default 30 s). */
  replayTimeout?: Duration;
  maxEntries?: number;
  maxBytes?: number;
  /** The token (default: 192 random bits, base64url); tests pass none. */
  token?: string;
  /** Secrets the page and API never show: bodies are shown decoded with them redacted (shownDelivery); replays send the bytes as recorded. */
  secrets?: readonly string[];
  /** The client replays go through (default one of its own). */
  client?: DeliveryClient;
  /** Where the token is kept (with --record), named by the page for a URL without it. */
  tokenFile?: string;
  /** Each replay asked for by the page or the API, once answered. */
  onReplay?: (e: ReplayEvent) => void;
  /** Where the listener of this run listens, once it does: a replay to it is refused as one to the inspector is. */
  listener?: () => { host: string; port: number } | undefined;
}

/**
 * The local page of `webhook listen --inspect`: keeps the last deliveries with what they changed, streams
 * them to the page, shows one in detail and re-sends it on request. It never prints; the command prints its URL.
 */
export class Inspector {
  readonly token: string;
  private store: EntryStore;
  /** The highest seq added, and the highest one forgotten by a clear: a seq at or below it and not kept was cleared. */
  private highestSeq = 0;
  private clearedUpTo = 0;
  private readonly server: Server;
  private readonly streams = new Set<ServerResponse>();
  private readonly guards: Guards;
  private readonly client: DeliveryClient;
  private readonly files = new Map<string, { type: string; body: Buffer }>();
  private lastStats: { delivered: number; refused: number } | undefined;
  private boundPort = 0;
  private stopping: Promise<void> | undefined;

  constructor(private readonly opts: InspectorOptions) {
    this.token = opts.token ?? randomBytes(24).toString('base64url');
    this.guards = new Guards(keyMatcher(this.token), () => this.boundPort);
    this.store = this.newStore();
    this.client = opts.client ?? new DeliveryClient(1);
    this.server = createServer((req, res) => this.handle(req, res));
    // A request Node cannot parse is answered here, not by Node's bare 400, so it too carries the headers.
    this.server.on('clientError', (_err: Error, socket: Socket) => {
      if (!socket.writable) return socket.destroy();
      const headers = Object.entries(SECURITY_HEADERS).map(([k, v]) => `${k}: ${v}\r\n`).join('');
      socket.end(`HTTP/1.1 400 Bad Request\r\n${headers}connection: close\r\ncontent-length: 0\r\n\r\n`);
    });
  }

  /** Entries kept now and dropped so far. */
  get counts(): { kept: number; dropped: number; bytes: number } {
    return { kept: this.store.size, dropped: this.store.dropped, bytes: this.store.keptBytes };
  }

  get port(): number {
    return this.boundPort;
  }

  /** The page's URL, with the token. */
  get url(): string {
    return `http://${INSPECTOR_HOST}:${this.boundPort}/${this.token}/`;
  }

  /**
   * Load the page's files and listen on the first free port of `ports`; resolves with the page's URL. A
   * port in use is skipped; when none is free the last one's error is thrown (code EADDRINUSE).
   */
  async start(): Promise<string> {
    const dir = new URL('./page/', import.meta.url);
    for (const [name, type] of STATIC_FILES) this.files.set(name, { type, body: readFileSync(new URL(name, dir)) });
    let last: unknown;
    for (const port of this.opts.ports) {
      try {
        await new Promise<void>((resolve, reject) => {
          this.server.once('error', reject);
          this.server.listen(port, INSPECTOR_HOST, () => {
            this.server.off('error', reject);
            resolve();
          });
        });
        this.boundPort = (this.server.address() as AddressInfo).port;
        return this.url;
      } catch (err) {
        last = err;
        if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
      }
    }
    throw last ?? new Error('no port to listen on');
  }

  /** Keep a delivery with what it changed, and show it; `recorded`: from the record file's history; `routes`: the --forward-to URLs it goes to. */
  add(delivery: Delivery, change: DeliveryChange, { recorded, routes }: { recorded: boolean; routes?: string[] }): void {
    this.store.add(delivery, change, recorded, routes);
    this.highestSeq = Math.max(this.highestSeq, delivery.seq);
    // The entry's JSON (its preview decoded) is made only for a page that is open.
    if (this.streams.size > 0) this.broadcast('entry', this.store.view(delivery.seq));
  }

  /** Show a try to forward a delivery. */
  forward(e: ForwardEvent): void {
    const view = this.store.forward(e) ?? forwardView(e);
    this.broadcast('forward', { seq: e.seq, ...view });
  }

  /** Keep the app's answer to a try, as the record file's history holds it (no page is open yet). */
  recordedForward(entry: ForwardEntry): void {
    this.store.restoreForward(entry);
  }

  /** Show the listener's counters. */
  stats(delivered: number, refused: number): void {
    this.lastStats = { delivered, refused };
    this.broadcast('stats', this.lastStats);
  }

  /** Close the event streams and the server; idempotent. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
      for (const res of this.streams) res.end();
      this.streams.clear();
      this.server.closeAllConnections();
      await closed;
      if (!this.opts.client) await this.client.close();
    })();
    return this.stopping;
  }

  private newStore(): EntryStore {
    return new EntryStore(this.opts.verified, this.opts.maxEntries ?? DEFAULT_MAX_ENTRIES, this.opts.maxBytes ?? DEFAULT_MAX_BYTES, this.opts.secrets);
  }

  /** Forget every kept entry (the record file keeps them); the open pages are told (`cleared`). */
  private clear(): void {
    this.store = this.newStore();
    this.clearedUpTo = this.highestSeq;
    this.broadcast('cleared', { kept: 0, dropped: 0 });
  }

  private broadcast(event: string, data: unknown): void {
    if (this.streams.size === 0) return;
    const text = sse(event, data);
    for (const res of this.streams) {
      res.write(text);
      if (res.writableLength > MAX_STREAM_BUFFER) {
        this.streams.delete(res);
        res.destroy();
      }
    }
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    this.route(req, res).catch((err: unknown) => {
      if (err instanceof ForbiddenPage) return send(res, 403, 'text/html; charset=utf-8', forbiddenPage(this.opts.tokenFile));
      const e = err instanceof HttpError ? err : new HttpError(500, `inspector error: ${(err as Error).message}`);
      send(res, e.status, JSON_TYPE, JSON.stringify({ error: e.message }), e.headers);
    });
  }

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = this.guards.pathOf(req);
    const method = req.method ?? 'GET';
    if (path === undefined) {
      send(res, 308, 'text/plain; charset=utf-8', '', { location: `/${this.token}/` });
      return;
    }
    if (path === 'replay') {
      if (method !== 'POST') throw new HttpError(405, 'replay is POST only', { allow: 'POST' });
      this.guards.checkAction(req);
      const fields = asObject(await readJson(req, REPLAY_ACTION_BYTES));
      if (typeof fields?.seq !== 'number') throw new HttpError(400, 'expected {"seq": <number>, "url"?: "<http(s) URL>", "headers"?: {…}, "body"?: "<text>"}');
      if (!Number.isSafeInteger(fields.seq) || fields.seq < 1) throw new HttpError(400, '"seq" must be a delivery\'s number: a whole number from 1');
      await this.replay(fields.seq, replayInput(fields), res);
      return;
    }
    if (path.startsWith('api/')) return this.api(path.slice('api/'.length), method, req, res);
    if (method !== 'GET' && method !== 'HEAD') throw new HttpError(405, `${path || 'this page'} is GET only`, { allow: 'GET' });
    const file = this.files.get(path === '' ? 'index.html' : path);
    if (file) send(res, 200, file.type, file.body);
    // HEAD of the stream: its head alone, and the answer ends (a stream opened for it would never end).
    else if (path === 'events' && method === 'HEAD') send(res, 200, 'text/event-stream; charset=utf-8', '');
    else if (path === 'events') this.openStream(res);
    else if (path.startsWith('deliveries/')) this.sendDetail(path.slice('deliveries/'.length), res);
    else throw new HttpError(404, 'no such page');
  }

  /** The JSON API (see the top of this file). */
  private async api(path: string, method: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (path === 'deliveries') {
      if (method === 'GET' || method === 'HEAD') {
        const params = new URL(req.url ?? '/', 'http://inspector').searchParams;
        return send(res, 200, JSON_TYPE, JSON.stringify(deliveryList(this.store, params)));
      }
      if (method !== 'DELETE') throw new HttpError(405, 'api/deliveries is GET or DELETE', { allow: 'GET, DELETE' });
      this.guards.checkAction(req, { json: false });
      this.clear();
      res.writeHead(204, SECURITY_HEADERS).end();
      return;
    }
    const one = /^deliveries\/([^/]+)(\/replay)?$/.exec(path);
    if (!one) throw new HttpError(404, 'no such API path: see docs/webhooks.md, "Inspector API"');
    if (one[2] === undefined) {
      if (method !== 'GET' && method !== 'HEAD') throw new HttpError(405, 'a delivery is GET only', { allow: 'GET' });
      return this.sendDetail(one[1]!, res);
    }
    if (method !== 'POST') throw new HttpError(405, 'replay is POST only', { allow: 'POST' });
    this.guards.checkAction(req);
    const seq = seqOf(one[1]!);
    // An empty body is a replay as recorded.
    const fields = asObject(await readJson(req, REPLAY_ACTION_BYTES, {}));
    if (!fields) throw new HttpError(400, 'expected a JSON object: {"url"?: "<http(s) URL>", "headers"?: {…}, "body"?: "<text>"}');
    await this.replay(seq, replayInput(fields), res);
  }

  private openStream(res: ServerResponse): void {
    res.writeHead(200, { ...SECURITY_HEADERS, 'content-type': 'text/event-stream; charset=utf-8', connection: 'keep-alive' });
    let text = '';
    for (const view of this.store.views()) {
      text += sse('entry', view);
      if (text.length > 1024 * 1024) {
        res.write(text);
        text = '';
      }
    }
    text += sse('ready', { forwardTo: this.opts.forwardTo ?? null, recording: this.opts.recording, kept: this.store.size, dropped: this.store.dropped });
    if (this.lastStats) text += sse('stats', this.lastStats);
    res.write(text);
    this.streams.add(res);
    res.once('close', () => this.streams.delete(res));
  }

  private sendDetail(seqText: string, res: ServerResponse): void {
    const found = this.found(seqOf(seqText));
    send(res, 200, JSON_TYPE, JSON.stringify(this.store.detail(found.seq)));
  }

  /** The kept delivery `seq`; HttpError 404 when never kept, 410 when dropped. */
  private found(seq: number): Delivery {
    const found = Number.isSafeInteger(seq) ? this.store.lookup(seq) : { kind: 'unknown' as const };
    if (found.kind === 'dropped') throw new HttpError(410, `delivery #${seq} is no longer kept: the inspector keeps the last ${this.opts.maxEntries ?? DEFAULT_MAX_ENTRIES} deliveries (${Math.round((this.opts.maxBytes ?? DEFAULT_MAX_BYTES) / 1024 / 1024)} MiB of bodies); an older one is in the record file, if any`);
    if (found.kind === 'unknown' && seq <= this.clearedUpTo) throw new HttpError(410, `delivery #${seq} was cleared from the inspector; the record file, if any, still has it`);
    if (found.kind === 'unknown') throw new HttpError(404, `no delivery #${Number.isNaN(seq) ? '?' : seq} was received`);
    return found.delivery;
  }

  /** Send delivery `seq`, as recorded or edited, and answer with the app's answer; reported to onReplay. */
  private async replay(seq: number, input: ReplayInput, res: ServerResponse): Promise<void> {
    const delivery = this.found(seq);
    const url = input.url ?? this.opts.forwardTo;
    if (url === undefined) throw new HttpError(409, 'no URL to replay to: give one, or start listen with --forward-to');
    this.checkUrl(url);
    const { headers, body } = replayRequest(delivery, input, this.opts.key);
    const timeout = this.opts.replayTimeout ?? durationOf(30_000);
    const answer = secretFreeAnswer(await this.client.send({ url, method: delivery.method, headers, body, timeout }), this.opts.secrets ?? []);
    const edited = isEdited(input);
    this.opts.onReplay?.({ seq, url, edited, answer });
    send(res, 200, JSON_TYPE, JSON.stringify(answerView(url, edited, answer, this.opts.secrets ?? [])));
  }

  /**
   * A replay URL is checked as --forward-to is (plain http:// to loopback only unless --insecure); it is never
   * the inspector nor the listener (a replay there would come back as a new delivery), holds no user:password
   * (the URL is printed in the terminal and returned to the page: a credential goes in a header), and is of
   * a length a terminal line and a receiver can take.
   */
  private checkUrl(url: string): void {
    if (url.length > MAX_REPLAY_URL) throw new HttpError(400, `the replay URL is ${MAX_REPLAY_URL} characters at most`);
    try {
      httpUrl(url, 'url', { insecure: this.opts.insecure });
    } catch (err) {
      throw new HttpError(400, (err as Error).message);
    }
    const parsed = new URL(url);
    if (parsed.username !== '' || parsed.password !== '') throw new HttpError(400, 'the replay URL has a user:password: give a credential as a header (Authorization) instead');
    if (reachesListener(url, INSPECTOR_HOST, this.boundPort)) throw new HttpError(400, `${url} is this inspector itself: replay to your app instead`);
    const listener = this.opts.listener?.();
    if (listener && reachesListener(url, listener.host, listener.port)) throw new HttpError(400, `${url} is this run's listener itself: the replay would come back as a new delivery; replay to your app instead`);
  }
}


