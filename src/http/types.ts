// The shapes the HTTP chain shares: a request, its answer, a link of the chain (Send), and how a request is
// repeated (RetryPolicy). Apart from the modules that implement them, so that the core, the dispatcher, the
// retry loop and its policies each import these and never one another in a circle.
import type { ApiError } from '../errors.js';

/** The methods a request may use: the spec's GET and POST (4), and the rest of HTTP's for `cardboard api`. */
export type HttpMethod = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'OPTIONS';

/** One request as the API layer describes it; `path` is already encoded (see `path` in url.ts). */
export interface HttpRequest {
  method: HttpMethod;
  path: string;
  /** Query parameters; URLSearchParams keeps repeated keys and their order. */
  query?: Record<string, string | number> | URLSearchParams;
  /** Sent as JSON with Content-Type: application/json (spec 4). */
  body?: unknown;
  /** Bytes sent as they are instead of `body`, still as application/json (spec 4): `cardboard api --input`. */
  bodyBytes?: Buffer;
  /**
   * The answer as it came: `body` is the bytes (Content-Encoding undone, nothing parsed), and an ApiError for a
   * status outside 2xx carries the answer's headers and bytes (`response`). The token is scrubbed from both.
   */
  raw?: boolean;
  /** The caller knows a repeat cannot duplicate: a POST may be retried like a GET. */
  retrySafe?: boolean;
  /** How this request is repeated, when not as the client's default policy says (the import's rows; NO_RETRY). */
  retry?: RetryPolicy;
  /** Tries in all for this request, when it differs from the client's default policy (a long board read). */
  maxTries?: number;
  signal?: AbortSignal;
  /**
   * Ends the waits before the request leaves (the rate gate, a retry's backoff): it is then not sent
   * (CancelledError). `signal` ends those too, and cuts off a request in flight. The import passes the
   * run's "take no new work" here and its "stop now" as `signal`.
   */
  waitSignal?: AbortSignal;
}

/** A 2xx answer, decoded by content type (JSON → value, anything else → text), or its bytes (a Buffer) for a `raw` request. */
export interface HttpResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
  url: string;
  method: string;
}

/** The shape every wrapper shares: take a request, give a 2xx response or throw ApiError. */
export type Send = (req: HttpRequest) => Promise<HttpResponse>;

/** The tries of one request so far, as the loop counts them. */
export interface Tries {
  /** Tries made, the one that just failed included. */
  made: number;
  /** Earlier tries the policy called throttled: declined for load, not counted against a try cap. */
  throttled: number;
}

/**
 * After a failed try: wait `wait` ms, then try again (`throttled`: this try does not count against a try
 * cap; `notice`: the line a person reads about the wait), or end the request by throwing `stop`.
 */
export type RetryDecision = { wait: number; throttled?: boolean; notice?: string } | { stop: unknown };

/** What the loop tells before each wait. `counted`: tries made that count against a cap, this one included. */
export interface RetryInfo<Req = HttpRequest> {
  err: ApiError;
  attempt: number;
  counted: number;
  delayMs: number;
  req: Req;
}

/** How one request (a request to the service unless `Req` says otherwise) is repeated; the loop asks it after every failed try. */
export interface RetryPolicy<Req = HttpRequest> {
  /**
   * What to do after a failed try. It may read before it answers (the import settles a try that may have
   * been applied by reading the board), so it may return a promise; it never sleeps.
   */
  decide(err: unknown, tries: Tries, req: Req): RetryDecision | Promise<RetryDecision>;
  /** Right before each try leaves: a promise the try waits for (the import's journal writing finished rows), if any. */
  beforeTry?(): Promise<void> | undefined;
  /** Before each wait the policy decided (the import's row events). */
  onRetry?(info: RetryInfo<Req>): void;
  /** A try got an answer. */
  succeeded?(): void;
}
