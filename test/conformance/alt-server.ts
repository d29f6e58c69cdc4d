// An independent implementation of the Card Board Service spec, written from the spec alone (it
// imports nothing from src/emulator), that makes OTHER legal choices where the spec is silent
// (spec 4.5 page size, 7 status codes, 2.2 extra card keys and value types, 2.3 field properties).
// Each choice is switchable per test, so the conformance tests can show that cardboard does not
// silently depend on the emulator's answers.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';

/** How error answers look (spec 7: format not shown). */
export type ErrorStyle = 'message' | 'reason' | 'boom' | 'text' | 'html' | 'empty' | 'json-charset';
/** How card ids look (spec 2.2: a string, shape not shown). */
export type IdStyle = 'uuid' | 'numeric' | 'odd';

/** The switchable choices. Every one is legal under the spec. */
export interface AltOptions {
  boardId: string;
  token: string;
  /** Served under this path prefix, e.g. `/svc/v2` (the POST URL carries it). */
  prefix: string;
  pageSize: number;
  /** Status of a successful card creation and of a comment (200 or 201). */
  createdStatus: number;
  idStyle: IdStyle;
  errorStyle: ErrorStyle;
  /** Status for a missing or wrong token (401 or 403). */
  authStatus: number;
  /** 404s answered with an HTML page whatever errorStyle says. */
  htmlNotFound: boolean;
  /** Schema as `{"fields": [...]}` instead of a bare array. */
  schemaWrapped: boolean;
  /** Cards carry createdAt and boardId besides their fields. */
  extraCardKeys: boolean;
  /** `Connection: close` on every answer. */
  connectionClose: boolean;
  /** gzip bodies: never, only when the request's Accept-Encoding names gzip, or always (RFC 9110 12.5.3 allows it). */
  gzip: 'never' | 'if-asked' | 'always';
  /** JSON bodies start with a UTF-8 byte order mark. */
  bom: boolean;
  /** Content-Type of successful JSON answers (spec 4: "bodies are JSON", the header is not shown). */
  jsonType: string;
  updateMode: 'Always Create New' | 'Update if exists';
}

/** A field object (spec 2.3) with properties the spec does not show. */
export interface AltField {
  name: string;
  uuid: string;
  [property: string]: unknown;
}

/** A canned answer for the next matching requests (e.g. a 503 with Retry-After as an HTTP date). */
export interface Fault {
  method?: string;
  /** Only a request whose body contains this text (one row's value, say). */
  bodyHas?: string;
  status: number;
  headers?: Record<string, string>;
  body?: string;
}

/** One request as the server saw it. */
export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
  status: number;
}

/** The running server: its URLs, its state, what it saw, and its switches. */
export interface AltServer {
  url: string;
  /** The board's POST URL as Card Sources would show it (spec 2.4). */
  postUrl: string;
  opts: AltOptions;
  fields: AltField[];
  cards: Record<string, unknown>[];
  comments: { cardId: string; comment: Record<string, unknown> }[];
  requests: SeenRequest[];
  /** Rules of the spec the client broke (token in the query, wrong content type...). Tests expect it empty. */
  violations: string[];
  faults: Fault[];
  /** Called before a page of cards is served (a test changes the board between the pages of a walk). */
  hooks: {
    beforePage?: (page: number) => void;
    /** The page answered when `page` is asked for (a server that repeats its pages); default `page`. */
    servePage?: (page: number) => number;
  };
  /** Add n cards with values of every JSON type; returns their ids. */
  seed(n: number): string[];
  close(): Promise<void>;
}

/** The default field list: names with a space and mixed case, and properties the spec does not show. */
export function defaultFields(): AltField[] {
  return [
    { name: 'Title', uuid: randomUUID(), type: 'text', required: true },
    { name: 'Status', uuid: randomUUID(), type: 'select', options: ['Open', 'Done'], required: false },
    { name: 'Due Date', uuid: randomUUID(), type: 'date' },
    { name: 'Estimate', uuid: randomUUID(), type: 'number' },
    { name: 'Tags', uuid: randomUUID(), type: 'multi', options: [] },
  ];
}

const DEFAULTS: AltOptions = {
  boardId: 'board-7',
  token: 'alt-secret-token-9f3e',
  prefix: '',
  pageSize: 7,
  createdStatus: 201,
  idStyle: 'uuid',
  errorStyle: 'message',
  authStatus: 403,
  htmlNotFound: false,
  schemaWrapped: true,
  extraCardKeys: true,
  connectionClose: false,
  gzip: 'never',
  bom: false,
  jsonType: 'application/json; charset=utf-8',
  updateMode: 'Update if exists',
};

function errorBody(style: ErrorStyle, status: number, message: string): { type?: string; body: string } {
  switch (style) {
    case 'message':
      return { type: 'application/json', body: JSON.stringify({ message }) };
    case 'reason':
      return { type: 'application/json', body: JSON.stringify({ reason: message }) };
    case 'boom':
      // Fastify/hapi shape: `error` is only the reason phrase, `message` says what went wrong.
      return { type: 'application/json', body: JSON.stringify({ statusCode: status, error: reasonPhrase(status), message }) };
    case 'json-charset':
      return { type: 'application/json; charset=utf-8', body: JSON.stringify({ error: { code: status, message } }) };
    case 'text':
      return { type: 'text/plain; charset=utf-8', body: `${message}\n` };
    case 'html':
      return { type: 'text/html; charset=utf-8', body: htmlPage(status, message) };
    case 'empty':
      return { body: '' };
  }
}

function reasonPhrase(status: number): string {
  return { 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 429: 'Too Many Requests', 503: 'Service Unavailable' }[status] ?? 'Error';
}

function htmlPage(status: number, message: string): string {
  return `<!DOCTYPE html>\n<html><head><style>body{font:14px sans-serif}</style><script>var x=1;</script></head>\n<body><h1>${status} ${reasonPhrase(status)}</h1>\n<p>${message}</p><hr><address>alt-server</address></body></html>\n`;
}

/**
 * Store a card's field as an own key: `card[name] = v` with a field named `__proto__` would set the card's
 * prototype instead, and the field would never be served back.
 */
function setField(card: Record<string, unknown>, name: string, value: unknown): void {
  Object.defineProperty(card, name, { value, writable: true, enumerable: true, configurable: true });
}

/** Start the server on 127.0.0.1, port 0, with `overrides` on top of the defaults. */
export async function startAltServer(overrides: Partial<AltOptions> = {}, fields: AltField[] = defaultFields()): Promise<AltServer> {
  const opts: AltOptions = { ...DEFAULTS, ...overrides };
  let counter = 0;
  const newId = (): string => {
    counter++;
    if (opts.idStyle === 'numeric') return String(counter).padStart(5, '0');
    if (opts.idStyle === 'odd') return `card ${counter}/ü é#?%`;
    return randomUUID();
  };

  const state = {
    url: '',
    postUrl: '',
    opts,
    fields,
    cards: [] as Record<string, unknown>[],
    comments: [] as AltServer['comments'],
    requests: [] as SeenRequest[],
    violations: [] as string[],
    faults: [] as Fault[],
    hooks: {} as AltServer['hooks'],
  };

  function createCard(values: Record<string, unknown>): Record<string, unknown> {
    const card: Record<string, unknown> = { _id: newId() };
    if (opts.extraCardKeys) Object.assign(card, { createdAt: new Date(Date.UTC(2024, 0, 1, 0, 0, counter)).toISOString(), boardId: opts.boardId });
    // Spec 4.3 rule 1: a key that is not a field name exactly is dropped.
    for (const f of fields) if (Object.hasOwn(values, f.name)) setField(card, f.name, values[f.name]);
    state.cards.push(card);
    return card;
  }

  function seed(n: number): string[] {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      const values: Record<string, unknown> = { Title: `Card ${i + 1}`, Status: i % 2 ? 'Done' : 'Open', Estimate: i * 1.5, Tags: i % 3 ? ['x', `t${i}`] : [] };
      values['Due Date'] = i % 4 === 0 ? null : `2024-05-${String((i % 28) + 1).padStart(2, '0')}`;
      ids.push(createCard(values)._id as string);
    }
    return ids;
  }

  function send(req: IncomingMessage, res: ServerResponse, status: number, body: string, type?: string, extra: Record<string, string> = {}) {
    const headers: Record<string, string> = { ...extra };
    if (type) headers['content-type'] = type;
    if (opts.connectionClose) headers.connection = 'close';
    let payload: Buffer = Buffer.from(body, 'utf8');
    const asked = /\bgzip\b/i.test(String(req.headers['accept-encoding'] ?? ''));
    if (payload.length > 0 && (opts.gzip === 'always' || (opts.gzip === 'if-asked' && asked))) {
      payload = gzipSync(payload);
      headers['content-encoding'] = 'gzip';
    }
    res.writeHead(status, headers);
    // Several writes and no Content-Length: the body goes out chunked.
    const step = Math.max(1, Math.ceil(payload.length / 3));
    for (let i = 0; i < payload.length; i += step) res.write(payload.subarray(i, i + step));
    res.end();
  }

  function json(req: IncomingMessage, res: ServerResponse, status: number, value: unknown) {
    send(req, res, status, `${opts.bom ? '\uFEFF' : ''}${JSON.stringify(value)}`, opts.jsonType || undefined);
  }

  function fail(req: IncomingMessage, res: ServerResponse, status: number, message: string) {
    if (status === 404 && opts.htmlNotFound) return send(req, res, 404, htmlPage(404, message), 'text/html');
    const { type, body } = errorBody(opts.errorStyle, status, message);
    send(req, res, status, body, type);
  }

  function route(req: IncomingMessage, res: ServerResponse, raw: string) {
    const url = new URL(req.url ?? '/', 'http://x');
    for (const [key, value] of url.searchParams) {
      if (key.toLowerCase().includes('token') || value === opts.token) state.violations.push(`token in the query: ${req.url}`);
    }
    const fault = state.faults.findIndex((f) => (f.method === undefined || f.method === req.method) && (f.bodyHas === undefined || raw.includes(f.bodyHas)));
    if (fault >= 0) {
      const [f] = state.faults.splice(fault, 1);
      return send(req, res, f!.status, f!.body ?? '', f!.body ? 'text/plain' : undefined, f!.headers);
    }
    if (!url.pathname.startsWith(`${opts.prefix}/api/`)) return fail(req, res, 404, 'No such route');
    let parts: string[];
    try {
      parts = url.pathname.slice(opts.prefix.length).split('/').slice(1).map(decodeURIComponent);
    } catch {
      return fail(req, res, 400, 'Malformed path');
    }
    // Spec 5: the token travels in x-token, and only there.
    if (req.headers['x-token'] !== opts.token) return fail(req, res, opts.authStatus, 'Invalid API key');
    let body: Record<string, unknown> | undefined;
    if (req.method === 'POST') {
      // Spec 4: requests with a body send Content-Type: application/json.
      if (!/^application\/json\b/i.test(String(req.headers['content-type']))) state.violations.push(`POST without JSON content type: ${req.url}`);
      try {
        body = JSON.parse(raw) as Record<string, unknown>;
      } catch {
        return fail(req, res, 400, 'Body is not JSON');
      }
      if (body === null || typeof body !== 'object' || Array.isArray(body)) return fail(req, res, 400, 'Body must be an object');
    }
    const [api, kind, id, sub, cardId] = parts;
    if (api !== 'api') return fail(req, res, 404, 'No such route');
    const board = kind === 'schema' ? id : kind === 'aptlet' ? id : undefined;
    if (kind === 'card' && sub === 'comment' && parts.length === 4 && req.method === 'POST') {
      if (!state.cards.some((c) => c._id === id)) return fail(req, res, 404, `No card ${id}`);
      const comment = { id: randomUUID(), userId: 'u-1', content: body!.content, seenByUsers: [], userName: 'API', createdAt: new Date().toISOString() };
      state.comments.push({ cardId: id!, comment });
      return json(req, res, opts.createdStatus, comment);
    }
    if (board === undefined) return fail(req, res, 404, 'No such route');
    if (board !== opts.boardId) return fail(req, res, 404, `No board ${board}`);
    const schemaPath = (kind === 'aptlet' && sub === 'schema' && parts.length === 4) || (kind === 'schema' && parts.length === 3);
    if (schemaPath && req.method === 'GET') return json(req, res, 200, opts.schemaWrapped ? { fields } : fields);
    if (kind === 'aptlet' && parts.length === 3) {
      if (req.method === 'POST') return putCard(req, res, body!);
      const page = url.searchParams.get('page') ?? '0';
      if (!/^\d+$/.test(page)) return fail(req, res, 400, 'page must be a zero-based integer');
      state.hooks.beforePage?.(Number(page));
      const start = (state.hooks.servePage?.(Number(page)) ?? Number(page)) * opts.pageSize;
      return json(req, res, 200, state.cards.slice(start, start + opts.pageSize));
    }
    if (kind === 'aptlet' && sub === 'card' && parts.length === 5 && req.method === 'GET') {
      const card = state.cards.find((c) => c._id === cardId);
      return card ? json(req, res, 200, card) : fail(req, res, 404, `No card ${cardId}`);
    }
    fail(req, res, 404, 'No such route');
  }

  function putCard(req: IncomingMessage, res: ServerResponse, body: Record<string, unknown>) {
    // Spec 4.3 rules 3-4.
    const existing = opts.updateMode === 'Update if exists' && typeof body._id === 'string' ? state.cards.find((c) => c._id === body._id) : undefined;
    if (!existing) return json(req, res, opts.createdStatus, createCard(body));
    for (const f of fields) if (Object.hasOwn(body, f.name)) setField(existing, f.name, body[f.name]);
    json(req, res, 200, existing);
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const seen: SeenRequest = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: raw, status: 0 };
      state.requests.push(seen);
      res.on('finish', () => {
        seen.status = res.statusCode;
      });
      route(req, res, raw);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  state.url = `http://127.0.0.1:${port}${opts.prefix}`;
  state.postUrl = `${state.url}/api/aptlet/${encodeURIComponent(opts.boardId)}`;
  return {
    ...state,
    seed,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
