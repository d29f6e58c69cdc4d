import type { Clock } from '../clock.js';
import type { ResolveContext, ResolvedBoard } from '../config/resolve.js';
import type { CardboardConfig } from '../config/store.js';
import type { Http, Pacer, RetryPolicy } from '../http/index.js';
import type { NoticeContext } from '../io/notice.js';
import type { Card, Comment, Field } from '../spec-types.js';
import type { Duration } from '../units.js';

export type { ResolvedBoard, Source } from '../config/resolve.js';

/** What the API layer reads from the run: a part of the command context (api/ never imports context.ts). */
export interface ApiContext extends ResolveContext, NoticeContext {
  globals: ResolveContext['globals'] & { timeout?: Duration; rate?: number; insecure?: boolean; verbose?: boolean; quiet?: boolean };
  clock: Clock;
  signal: AbortSignal;
  /** The config store: the selected board's stored credentials. */
  config: { read(): Promise<CardboardConfig> };
}

/** Credentials given explicitly (board add checks a token before saving it). */
export interface ApiTarget {
  baseUrl: string;
  id: string;
  token: string;
}

/** Per-call options of a write. */
interface WriteOptions {
  /** The caller knows a repeat cannot duplicate (e.g. `_id` on an Update-if-exists board): retry like a GET. */
  retrySafe?: boolean;
  /** How the write is repeated, when not as a command's (the import's rows bring their own policy). */
  retry?: RetryPolicy;
  signal?: AbortSignal;
  /** Ends a wait before a try (for the rate gate, between tries; the try is then not sent); unlike `signal`, a request sent is awaited. */
  waitSignal?: AbortSignal;
}

interface ReadOptions {
  /** How the read is repeated, when not as a command's (NO_RETRY: an optional read fails at once). */
  retry?: RetryPolicy;
  /** Tries in all, when a read needs more patience than the client's default (a whole-board scan). */
  maxTries?: number;
  signal?: AbortSignal;
}

/**
 * Where a list of cards is read, when not the board's own list (spec 4.5): `cardboard api --paginate` walks the
 * path it was given, with the query it was given (`page` is set by the walk).
 */
interface ListAt {
  /** Encoded path, as the HTTP core takes it. */
  path: string;
  query: URLSearchParams;
}

/** How far a walk of the pages has got: the page just read, pages read, cards read (a card on two pages twice). */
export interface PagesRead {
  page: number;
  pages: number;
  cards: number;
}

/** One typed function per endpoint of the spec (section 4), over the shared HTTP core. */
export interface Api {
  readonly board: ResolvedBoard;
  /** GET /api/aptlet/{board}/schema (spec 4.2); tolerates a `{"fields": [...]}` wrapper. */
  getSchema(opts?: ReadOptions): Promise<Field[]>;
  /** The schema from the per-board cache (short TTL) or the server; `refresh` skips the cache. */
  schema(opts?: { refresh?: boolean }): Promise<Field[]>;
  /** POST /api/aptlet/{board} (spec 4.3): create or update; returns the card with its `_id`. */
  putCard(body: Record<string, unknown>, opts?: WriteOptions): Promise<Card>;
  /** GET /api/aptlet/{board}/card/{id} (spec 4.4). */
  getCard(id: string, opts?: ReadOptions): Promise<Card>;
  /** GET /api/aptlet/{board}?page=N (spec 4.5): one zero-based page; [] past the end. `at`: another path and query. */
  listCards(page: number, opts?: ReadOptions & { at?: ListAt }): Promise<Card[]>;
  /**
   * Pages from `startPage` until the first empty array, streamed one page at a time. A non-empty page made
   * only of cards seen on earlier pages ends the walk with an error (the server repeats itself); `onPage`
   * hears of each page read (for progress). `seen` says whether a card was on an earlier page of this walk,
   * for a caller that keeps its cards anyway; without it the walk keeps a set of the ids (8 bytes each).
   */
  cardPages(opts?: { startPage?: number; signal?: AbortSignal; maxTries?: number; onPage?: (read: PagesRead) => void; seen?: (card: Card) => boolean; at?: ListAt }): AsyncIterable<Card[]>;
  /** POST /api/card/{cardId}/comment (spec 4.1). */
  postComment(cardId: string, content: string, opts?: WriteOptions): Promise<Comment>;
}

/** The Api plus what the import engine needs: the run's rate gate and the raw client. */
export interface ApiClient extends Api {
  readonly pacer: Pacer;
  readonly http: Http;
}
