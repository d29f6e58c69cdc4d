import http from 'node:http';
import { Api, type ApiRequest, BAD_BODY, type Reply } from './api.js';
import { demoBoards, normalizeBoards } from './boards.js';
import { type FaultSpec, parseFaults, seededRandom } from './faults.js';
import { RateLimiter } from './rate-limit.js';
import { idSource } from './ids.js';
import { BoardStore } from './store.js';
import type { EmulatorOptions, EmulatorState, RecordedRequest, RunningEmulator } from './types.js';
import { WebhookSender } from './webhooks.js';

export { DEFAULT_RETRY_CAP_MS } from './webhooks.js';

export { BoardsFileError, DEMO_BOARD_ID, DEMO_SIGNING_KEY, DEMO_TOKEN, readBoardsFile } from './boards.js';
export { FaultSpecError, parseFaults } from './faults.js';
export type * from './types.js';

/** Largest POST body read; a bigger one is answered 400. */
const MAX_BODY = 1 << 20;
const JSON_TYPE = 'application/json';
const SERVICE_UNAVAILABLE: Reply = { status: 503, body: '{"error":"Service Unavailable"}', retryAfter: 1 };
const INTERNAL_ERROR: Reply = { status: 500, body: '{"error":"Internal Server Error"}' };
// A Map: a board's field may be named `toString` or `constructor`, which a plain object would answer for.
const DEMO_VALUES = new Map<string, string[]>([
  ['Status', ['To do', 'Doing', 'Done']],
  ['Owner', ['Ada', 'Grace', 'Linus', 'Margaret']],
  ['Priority', ['High', 'Medium', 'Low']],
]);

/** True for `application/json`, with or without parameters such as `; charset=utf-8`. */
function isJsonType(value: string | undefined): boolean {
  if (!value) return false;
  const semi = value.indexOf(';');
  return (semi === -1 ? value : value.slice(0, semi)).trim().toLowerCase() === JSON_TYPE;
}

function send(res: http.ServerResponse, reply: Reply): void {
  const headers: http.OutgoingHttpHeaders = {
    'content-type': JSON_TYPE,
    'content-length': Buffer.byteLength(reply.body),
  };
  if (reply.retryAfter !== undefined) headers['retry-after'] = String(reply.retryAfter);
  res.writeHead(reply.status, headers);
  res.end(reply.body);
}

/** Start the local Card Board Service and resolve once it listens. */
export async function startEmulator(opts: EmulatorOptions = {}): Promise<RunningEmulator> {
  const settings = normalizeBoards(opts.boards ?? demoBoards(opts.demoSeed));
  if (opts.webhookUrl !== undefined) settings[Object.keys(settings)[0]!]!.webhookUrl = opts.webhookUrl;
  const newId = idSource(opts.idSeed);
  const stores = new Map(Object.entries(settings).map(([id, boardSettings]) => [id, new BoardStore(id, boardSettings, newId)]));
  const webhooks = new WebhookSender(
    (boardId) => ({ url: settings[boardId]!.webhookUrl, signingKey: settings[boardId]!.signingKey }),
    { retryCapMs: opts.webhookRetryCapMs, timeoutMs: opts.webhookTimeoutMs },
  );
  const limiter = opts.rateLimit ? new RateLimiter(opts.rateLimit.perMinute, opts.rateLimit.burst) : undefined;
  const api = new Api(stores, opts.pageSize ?? 50, limiter, (board, json) => webhooks.enqueue(board.id, json));
  seed(api, stores.values().next().value!, opts.seedCards ?? 0);

  let faults: FaultSpec = parseFaults(opts.faults ?? '');
  const random = seededRandom(opts.faultSeed ?? Math.floor(Math.random() * 2 ** 32));
  const roll = (p: number) => p > 0 && random() < p;
  const recordLimit = opts.recordLimit ?? 50_000;
  let recorded: RecordedRequest[] = [];
  const delays = new Set<NodeJS.Timeout>();

  const state = (): EmulatorState =>
    Object.fromEntries([...stores].map(([id, store]) => [id, store.snapshot(webhooks.stats(id))]));
  const requests = (): RecordedRequest[] =>
    recorded.map((r) => ({
      ...r,
      headers: r.headers['x-token'] === undefined ? { ...r.headers } : { ...r.headers, 'x-token': '***' },
    }));

  /** Faults before, the API, faults after. */
  function answer(req: http.IncomingMessage, res: http.ServerResponse, rec: RecordedRequest, apiReq: ApiRequest) {
    const faultsNow = faults;
    if (roll(faultsNow.unavailable)) return reply(res, rec, SERVICE_UNAVAILABLE);
    if (roll(faultsNow.reset)) return void req.socket.destroy();
    let out = api.handle(apiReq);
    if (out.status < 400) {
      // The request was applied (card or comment stored): the client cannot tell that it succeeded.
      if (roll(faultsNow.errorAfter)) out = INTERNAL_ERROR;
      else if (roll(faultsNow.resetAfter)) return void req.socket.destroy();
    }
    reply(res, rec, out);
  }

  function reply(res: http.ServerResponse, rec: RecordedRequest, out: Reply) {
    rec.status = out.status;
    send(res, out);
  }

  function dispatch(req: http.IncomingMessage, res: http.ServerResponse, rec: RecordedRequest, body: unknown) {
    const target = rec.path;
    const queryAt = target.indexOf('?');
    const token = req.headers['x-token'];
    const apiReq: ApiRequest = {
      method: rec.method,
      path: queryAt === -1 ? target : target.slice(0, queryAt),
      query: queryAt === -1 ? '' : target.slice(queryAt + 1),
      token: typeof token === 'string' ? token : undefined,
      body,
    };
    const delay = faults.delayMs;
    if (delay <= 0) return answer(req, res, rec, apiReq);
    const timer = setTimeout(() => {
      delays.delete(timer);
      answer(req, res, rec, apiReq);
    }, delay);
    delays.add(timer);
  }

  function onApiRequest(req: http.IncomingMessage, res: http.ServerResponse) {
    const rec: RecordedRequest = { method: req.method ?? 'GET', path: req.url ?? '/', headers: req.headers, status: 0, time: Date.now() };
    recorded.push(rec);
    if (recorded.length > recordLimit + 1000) recorded.splice(0, recorded.length - recordLimit);
    if (rec.method !== 'POST') return dispatch(req, res, rec, undefined);
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY) chunks.push(chunk);
    });
    req.on('end', () => {
      let body: unknown = BAD_BODY;
      // Spec 4: bodies are JSON sent as application/json; anything else is a bad request.
      if (size <= MAX_BODY && isJsonType(req.headers['content-type'])) {
        try {
          body = JSON.parse((chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)).toString('utf8'));
          rec.body = body;
        } catch {
          body = BAD_BODY;
        }
      }
      dispatch(req, res, rec, body);
    });
  }

  const server = http.createServer((req, res) => {
    if (req.url?.startsWith('/__emulator/')) return control(req, res);
    onApiRequest(req, res);
  });

  /** The test-only view: state, requests, faults; no token, local only. */
  function control(req: http.IncomingMessage, res: http.ServerResponse) {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const route = `${req.method} ${req.url}`;
      if (route === 'GET /__emulator/state') return send(res, { status: 200, body: JSON.stringify(state()) });
      if (route === 'GET /__emulator/requests') return send(res, { status: 200, body: JSON.stringify(requests()) });
      if (route === 'POST /__emulator/reset-requests') {
        recorded = [];
        return send(res, { status: 200, body: '{}' });
      }
      if (route === 'POST /__emulator/faults') {
        try {
          const spec = (JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as { faults?: string | null }).faults;
          faults = parseFaults(spec ?? '');
          return send(res, { status: 200, body: JSON.stringify({ faults: spec ?? null }) });
        } catch (err) {
          return send(res, { status: 400, body: JSON.stringify({ error: (err as Error).message }) });
        }
      }
      send(res, { status: 404, body: '{"error":"Not found"}' });
    });
  }

  const host = opts.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as { port: number }).port;

  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    boards: settings,
    state,
    requests,
    resetRequests: () => {
      recorded = [];
    },
    setFaults: (spec) => {
      faults = parseFaults(spec ?? '');
    },
    close: () =>
      new Promise<void>((resolve) => {
        webhooks.close();
        for (const t of delays) clearTimeout(t);
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** Insert `count` demo cards into the board (`--seed-cards`); no webhooks, they are the starting state. */
function seed(api: Api, board: BoardStore, count: number): void {
  for (let i = 1; i <= count; i++) {
    // Null prototype: a field named `__proto__` is a key of the body like any other.
    const body: Record<string, unknown> = Object.create(null);
    for (const name of board.settings.fields) {
      const values = DEMO_VALUES.get(name);
      body[name] = name === 'Name' ? `Demo card ${i}` : values ? values[(i - 1) % values.length] : `${name} ${i}`;
    }
    api.put(board, body);
  }
}
