// A hostile Card Board Service for tests: one misbehaviour per mode, each one legal enough on the
// wire that a client cannot refuse it up front. It speaks the spec's paths (4.2-4.5)
// and x-token (5), imports nothing from src/, and counts every request so a test can show that a
// command stopped instead of looping.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type HostileMode =
  /** Every list page answers the same non-empty page. */
  | 'repeat-page'
  /** Every list page answers cards never seen before, forever. */
  | 'endless-ids'
  /** Every answer's body trickles out one byte per `trickleMs` (headers at once). */
  | 'trickle'
  /** Every request is answered 429 with `Retry-After: retryAfter`. */
  | 'huge-retry-after'
  /** Every request (of `retryAfterMethods`) is answered 429 with `Retry-After:` an HTTP date a minute in the past. */
  | 'past-retry-after'
  /** Page 0 holds a `null` (and a number) among its cards. */
  | 'null-in-page'
  /** A card POST answers 2xx with a body that has no `_id`. */
  | 'no-id'
  /** Field names, values, ids and comment ids carry terminal escape sequences and bidi overrides. */
  | 'escapes'
  /** Every POST is refused 400 with a body that echoes the request's x-token. */
  | 'echo-token'
  /** List pages overlap: page p starts p cards early, as if a card were created ahead of the reader before each page read. */
  | 'shifting-pages'
  /** Behaves well: the baseline. */
  | 'plain';

export interface HostileOptions {
  mode: HostileMode;
  boardId?: string;
  token?: string;
  /** Field names of the schema (mode 'escapes' adds hostile ones). */
  fields?: string[];
  /** Cards on the board for the well-behaved paths (list pages of `pageSize`). */
  cards?: Array<Record<string, unknown>>;
  pageSize?: number;
  trickleMs?: number;
  retryAfter?: string;
  /** Modes 'huge-retry-after' and 'past-retry-after': only these methods are answered 429 (default: every request). */
  retryAfterMethods?: string[];
}

/** Hostile text used by mode 'escapes': OSC retitle, cursor up + erase line, RTL override, CR, LF. */
export const HOSTILE = {
  retitle: '\u001b]0;pwned\u0007',
  erase: '\u001b[1A\u001b[2K',
  rtl: 'evil\u202etxt.exe',
  cr: 'safe\roverwritten',
  lf: 'one\ntwo',
  c1: 'csi\u009b31m',
} as const;

export const HOSTILE_FIELDS = [
  `Title${HOSTILE.retitle}`,
  `Status${HOSTILE.erase}`,
  HOSTILE.rtl,
  HOSTILE.lf,
] as const;

export interface HostileServer {
  url: string;
  boardId: string;
  token: string;
  /** Every request seen: method, path with query, headers. */
  requests: Array<{ method: string; url: string; headers: IncomingMessage['headers']; body: string }>;
  /** Change the mode between commands of one test. */
  setMode(mode: HostileMode): void;
  close(): Promise<void>;
}

export async function startHostileServer(options: HostileOptions): Promise<HostileServer> {
  const boardId = options.boardId ?? 'hostileBoard0001';
  const token = options.token ?? 'hostile-token-0123456789';
  const pageSize = options.pageSize ?? 3;
  const trickleMs = options.trickleMs ?? 1000;
  let mode = options.mode;
  const baseFields = options.fields ?? ['Title', 'Status'];
  const cards =
    options.cards ??
    Array.from({ length: 5 }, (_, i) => ({ _id: `card${String(i).padStart(4, '0')}`, Title: `t${i}`, Status: 'Open' }));
  const requests: HostileServer['requests'] = [];
  const sockets = new Set<Socket>();
  let endless = 0;

  const fields = (): string[] => (mode === 'escapes' ? [...baseFields, ...HOSTILE_FIELDS] : baseFields);
  const schema = (): unknown[] => fields().map((name, i) => ({ name, uuid: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}` }));

  function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    if (mode === 'trickle') {
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.flushHeaders();
      let i = 0;
      const timer = setInterval(() => {
        if (res.destroyed || i >= text.length) {
          clearInterval(timer);
          if (!res.destroyed) res.end();
          return;
        }
        res.write(text[i++]);
      }, trickleMs);
      res.on('close', () => clearInterval(timer));
      return;
    }
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)), ...headers });
    res.end(text);
  }

  function listPage(page: number): unknown[] {
    switch (mode) {
      case 'repeat-page':
        return cards.slice(0, pageSize);
      case 'endless-ids':
        return Array.from({ length: pageSize }, () => ({ _id: `endless${++endless}`, Title: 'again' }));
      case 'null-in-page':
        return page === 0 ? [cards[0], null, 7] : [];
      case 'escapes':
        return page === 0
          ? [{ _id: `id${HOSTILE.retitle}`, Title: HOSTILE.erase, [HOSTILE_FIELDS[2]]: HOSTILE.rtl, [HOSTILE_FIELDS[3]]: HOSTILE.cr }]
          : [];
      case 'shifting-pages':
        return cards.slice(page * (pageSize - 1), page * (pageSize - 1) + pageSize);
      default:
        return cards.slice(page * pageSize, (page + 1) * pageSize);
    }
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const method = req.method ?? 'GET';
      const url = new URL(req.url ?? '/', 'http://hostile');
      requests.push({ method, url: url.pathname + url.search, headers: req.headers, body });
      if (req.headers['x-token'] !== token) return send(res, 401, { error: 'Unauthorized' });
      if (mode === 'huge-retry-after' && (options.retryAfterMethods?.includes(method) ?? true)) return send(res, 429, { error: 'Too Many Requests' }, { 'retry-after': options.retryAfter ?? '999999' });
      if (mode === 'past-retry-after' && (options.retryAfterMethods?.includes(method) ?? true)) {
        return send(res, 429, { error: 'Too Many Requests' }, { 'retry-after': new Date(Date.now() - 60_000).toUTCString() });
      }
      const path = url.pathname;
      const board = `/api/aptlet/${boardId}`;
      if (method === 'GET' && (path === `${board}/schema` || path === `/api/schema/${boardId}`)) return send(res, 200, schema());
      if (method === 'GET' && path === board) {
        const page = Number(url.searchParams.get('page') ?? '0');
        return send(res, 200, listPage(Number.isInteger(page) && page >= 0 ? page : 0));
      }
      if (method === 'GET' && path.startsWith(`${board}/card/`)) {
        const id = decodeURIComponent(path.slice(`${board}/card/`.length));
        if (mode === 'escapes') return send(res, 200, listPage(0)[0]);
        const card = cards.find((c) => c._id === id);
        return card ? send(res, 200, card) : send(res, 404, { error: 'Not Found' });
      }
      if (method === 'POST' && mode === 'echo-token') {
        return send(res, 400, { reason: `bad request for token ${String(req.headers['x-token'])}` });
      }
      if (method === 'POST' && path === board) {
        let parsed: Record<string, unknown>;
        try {
          parsed = JSON.parse(body) as Record<string, unknown>;
        } catch {
          return send(res, 400, { reason: 'body is not JSON' });
        }
        if (mode === 'no-id') return send(res, 200, { ok: true });
        const id = mode === 'escapes' ? `new${HOSTILE.retitle}${HOSTILE.rtl}` : `posted${requests.length}`;
        return send(res, 200, { ...parsed, _id: id });
      }
      const comment = /^\/api\/card\/([^/]+)\/comment$/.exec(path);
      if (method === 'POST' && comment) {
        const id = mode === 'escapes' ? `c${HOSTILE.erase}` : `comment${requests.length}`;
        return send(res, 200, { id, userId: 'u1', content: 'x', seenByUsers: [], userName: 'u', createdAt: new Date(0).toISOString() });
      }
      return send(res, 404, { error: 'Not Found' });
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    boardId,
    token,
    requests,
    setMode(next) {
      mode = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** The environment that points the CLI at `s`. */
export function hostileEnv(s: HostileServer): Record<string, string> {
  return { CARDBOARD_BASE_URL: s.url, CARDBOARD_BOARD: s.boardId, CARDBOARD_TOKEN: s.token };
}

/** For a test file: `hostile(mode)` starts a server that is closed after each test. */
export function useHostileServer(afterEach: (fn: () => Promise<void>) => void): (mode: HostileMode, extra?: Partial<HostileOptions>) => Promise<HostileServer> {
  let server: HostileServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });
  return async (mode, extra = {}) => {
    server = await startHostileServer({ ...extra, mode });
    return server;
  };
}

/**
 * A character a terminal would act on or hide, LF aside (each test checks line breaks for its output): C0
 * and C1 controls, DEL, U+2028/9, bidi and other format characters but the emoji joiner.
 */
export const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029]|(?!\u200d)\p{Cf}/u;
