import type { RateLimiter } from './rate-limit.js';
import type { BoardStore } from './store.js';

/** An answer of the API: status, JSON text, and Retry-After seconds when set. */
export interface Reply {
  status: number;
  body: string;
  retryAfter?: number;
}

/** Marks a POST body that is not JSON or was not sent as application/json. */
export const BAD_BODY: unique symbol = Symbol('bad body');

/** What the server hands to the API for one request. */
export interface ApiRequest {
  method: string;
  /** Path without the query, still percent-encoded. */
  path: string;
  query: string;
  token: string | undefined;
  /** Parsed JSON (POST), BAD_BODY, or undefined when there was no body. */
  body: unknown;
}

// Error bodies chosen like the real service's docs where the spec says "not shown" (spec 4, 7).
const UNAUTHORIZED: Reply = { status: 401, body: '{"error":"Unauthorized"}' };
const NOT_FOUND: Reply = { status: 404, body: '{"error":"Not found"}' };
const BAD_REQUEST: Reply = { status: 400, body: '{"error":"Bad request"}' };
const NOT_ALLOWED: Reply = { status: 405, body: '{"error":"Method not allowed"}' };
const RATE_LIMITED = '{"reason":"Rate limit exceeded. Try again shortly."}';

const GET = ['GET'];
const POST = ['POST'];
const GET_POST = ['GET', 'POST'];

type Route =
  | { kind: 'put' | 'list' | 'schema'; boardId: string }
  | { kind: 'card'; boardId: string; cardId: string }
  | { kind: 'comment'; cardId: string };

/** Match a path to an endpoint of spec 4 and the method it takes; undefined when no endpoint has it. */
function match(segments: string[]): { route: Route; methods: string[] } | undefined {
  const [root, api, resource, id, sub, subId, ...rest] = segments;
  if (root !== '' || api !== 'api' || rest.length > 0 || id === undefined || id === '') return undefined;
  if (resource === 'aptlet') {
    if (sub === undefined) return { route: { kind: 'list', boardId: id }, methods: GET_POST };
    if (sub === 'schema' && subId === undefined) return { route: { kind: 'schema', boardId: id }, methods: GET };
    if (sub === 'card' && subId) return { route: { kind: 'card', boardId: id, cardId: subId }, methods: GET };
  }
  if (resource === 'schema' && sub === undefined) return { route: { kind: 'schema', boardId: id }, methods: GET };
  if (resource === 'card' && sub === 'comment' && subId === undefined) return { route: { kind: 'comment', cardId: id }, methods: POST };
  return undefined;
}

function isObject(body: unknown): body is Record<string, unknown> {
  return typeof body === 'object' && body !== null && !Array.isArray(body);
}

function ok(value: unknown): Reply {
  return { status: 200, body: JSON.stringify(value) };
}

/** The /api endpoints of spec 4 over the boards' stores. Synchronous and allocation-light: it is the hot path. */
export class Api {
  /** Card id → the board holding it, for POST /api/card/{cardId}/comment (ids are unique across boards). */
  private readonly owners = new Map<string, BoardStore>();

  constructor(
    private readonly boards: Map<string, BoardStore>,
    private readonly pageSize: number,
    private readonly limiter: RateLimiter | undefined,
    /** Called with the board and the card's JSON after each create or update (webhooks). */
    private readonly onChange: (board: BoardStore, cardJson: string) => void,
  ) {
    for (const board of boards.values()) for (const card of board.cards) this.owners.set(card._id, board);
  }

  /** Create or update without HTTP (seeding); same rules as POST. */
  put(board: BoardStore, body: Record<string, unknown>): void {
    const { card } = board.put(body);
    this.owners.set(card._id, board);
  }

  /** Answer one /api request. */
  handle(req: ApiRequest): Reply {
    let segments: string[];
    try {
      // Path parameters are percent-decoded per segment, so ids may hold spaces, "/" (%2F) or any Unicode.
      segments = req.path.split('/').map(decodeURIComponent);
    } catch {
      return BAD_REQUEST;
    }
    const matched = match(segments);
    if (!matched) return NOT_FOUND;
    if (!matched.methods.includes(req.method)) return NOT_ALLOWED;
    const { route } = matched;
    // Spec 5: every request carries x-token.
    if (!req.token) return UNAUTHORIZED;
    if (this.limiter) {
      const wait = this.limiter.take(req.token);
      if (wait > 0) return { status: 429, body: RATE_LIMITED, retryAfter: wait };
    }
    const board = route.kind === 'comment' ? this.owners.get(route.cardId) : this.boards.get(route.boardId);
    if (!board) return NOT_FOUND;
    // The token of the board that owns the resource, and no other board's.
    if (req.token !== board.settings.token) return UNAUTHORIZED;

    switch (route.kind) {
      case 'schema':
        return ok(board.fields);
      case 'card': {
        const card = board.get(route.cardId);
        return card ? ok(card) : NOT_FOUND;
      }
      case 'list': {
        if (req.method === 'POST') return this.putCard(board, req.body);
        const page = new URLSearchParams(req.query).get('page') ?? '0';
        // Spec 4.5: a zero-based integer page.
        if (!/^\d{1,9}$/.test(page)) return BAD_REQUEST;
        return ok(board.page(Number(page), this.pageSize));
      }
      case 'comment': {
        if (!isObject(req.body) || typeof req.body.content !== 'string') return BAD_REQUEST;
        return ok(board.comment(route.cardId, req.body.content));
      }
    }
    return NOT_FOUND;
  }

  private putCard(board: BoardStore, body: unknown): Reply {
    // Spec 4.3: the body is a JSON object of field name → value.
    if (!isObject(body)) return BAD_REQUEST;
    const { card, created } = board.put(body);
    if (created) this.owners.set(card._id, board);
    const reply = ok(card);
    this.onChange(board, reply.body);
    return reply;
  }
}
