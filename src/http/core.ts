import { STATUS_CODES } from 'node:http';
import type { Dispatcher } from 'undici';
import { ApiError, type ApiResponse, CancelledError } from '../errors.js';
import { emptyRecord } from '../own-keys.js';
import { formatDuration } from '../units.js';
import { oneLine, quoted } from '../io/text.js';
import { MIN_SUBSTRING_SECRET, scrubBytes, scrubSecret, scrubValue } from '../redact.js';
import { VERSION } from '../version.js';
import { decodedBytes, utf8 } from './body.js';
import { AbortWatch, ANSWER_TIMEOUT, Deadlines, dispatchRequest, type RawResponse } from './dispatch.js';
import { TIMEOUT_ADVICE } from './error-words.js';
import { RATE_LIMIT_HINT } from './failure.js';
import { extractServerMessage, MESSAGE_COLUMNS, parseRetryAfter } from './message.js';
import type { HttpRequest, HttpResponse, Send } from './types.js';
import { displayUrl, joinUrl } from './url.js';

export type { HttpMethod, HttpRequest, HttpResponse, Send } from './types.js';

/** What the core needs: where, which token, which dispatcher, and how long to wait. */
export interface CoreOptions {
  baseUrl: string;
  token: string;
  dispatcher: Dispatcher;
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
  /** The run's clock (Clock.now): the time a Retry-After date is read against. */
  now: () => number;
  /** Hints that replace the generic ones for a refused token, naming where it came from (config/resolve.ts tokenHints). */
  hints?: { 401?: string; 403?: string };
}

/** `cardboard/0.1.0 node/20.20.2`: names the client in the server's logs. */
const USER_AGENT = `cardboard/${VERSION} node/${process.versions.node}`;

const HINTS: Record<number, string> = {
  401: 'The token was refused: check it, or store it again with `cardboard board add <alias> --url <POST URL>`.',
  403: 'The token is not allowed here: check the token and that the REST API is switched on in Card Sources.',
  404: 'Check the board id (`cardboard board show`) and the card id.',
  429: RATE_LIMIT_HINT,
};

const NETWORK_TEXT: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset by the server',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'DNS lookup failed',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  UND_ERR_SOCKET: 'connection closed unexpectedly',
  UND_ERR_CONNECT_TIMEOUT: 'no connection within the connect timeout',
  UND_ERR_HEADERS_TIMEOUT: 'no response within the timeout',
  UND_ERR_BODY_TIMEOUT: 'the response stalled past the timeout',
  UND_ERR_RES_EXCEEDED_MAX_SIZE: 'the response was larger than the 64 MB limit',
  ERR_BUFFER_TOO_LARGE: 'the response was larger than the 64 MB limit once decompressed',
  Z_DATA_ERROR: 'the compressed response was corrupt',
  Z_BUF_ERROR: 'the compressed response was cut short',
  EUNSUPPORTED_ENCODING: 'the response used a Content-Encoding cardboard cannot decode',
};

/** Network error code of an undici/net failure, looking through AggregateError and causes. */
function networkCode(err: unknown): string | undefined {
  const failure = err as { code?: unknown; errors?: unknown[]; cause?: unknown } | undefined;
  if (!failure || typeof failure !== 'object') return undefined;
  if (typeof failure.code === 'string') return failure.code;
  if (Array.isArray(failure.errors) && failure.errors.length > 0) return networkCode(failure.errors[0]);
  return failure.cause ? networkCode(failure.cause) : undefined;
}

function statusError(method: string, url: string, status: number, text: string, headers: HttpResponse['headers'], nowMs: number, hints: CoreOptions['hints'], body: string | Buffer | undefined, response?: ApiResponse): ApiError {
  const contentType = String(headers['content-type'] ?? '');
  const serverMessage = extractServerMessage(text, contentType);
  const retryAfter = parseRetryAfter(headers['retry-after'], nowMs);
  const reason = STATUS_CODES[status] ?? 'Error';
  const message = `${status} ${reason} from ${method} ${url}${serverMessage ? `: ${serverMessage}` : ''}`;
  const own = status === 401 || status === 403 ? hints?.[status] : undefined;
  const hint = own ?? HINTS[status] ?? (status >= 500 ? 'The service failed on its side; try again later.' : undefined);
  // Counted only for the answers a size limit gives (error-words.ts bodySizeNote words it): a row's 400 is rare, its body small.
  const sentBytes = body !== undefined && (status === 400 || status === 413) ? Buffer.byteLength(body) : undefined;
  return new ApiError(message, { method, url, status, serverMessage, retryAfter, sentBytes, response }, { hint });
}

/** Where a Location points, resolved against the request's URL; an unparsable one (`http://[::1`) as sent, on one line. */
function redirectTarget(location: string, base: string, token: string): string {
  try {
    return displayUrl(new URL(location, base).toString());
  } catch {
    // Scrubbed before the cut, which could otherwise leave part of the token in view.
    return `${quoted(oneLine(scrubSecret(location, token), 120))} (not a valid URL)`;
  }
}

function redirectError(method: string, url: string, status: number, headers: HttpResponse['headers'], token: string, response?: ApiResponse): ApiError {
  const raw = headers.location;
  const location = Array.isArray(raw) ? raw[0] : raw;
  // A Location is the server's text too: it may carry the token it was sent (in a query, say).
  const target = location ? scrubSecret(redirectTarget(location, url, token), token) : '(no Location header)';
  // undici's redirect handling and fetch forward x-token to any origin (only authorization and cookie are
  // dropped), so we never follow.
  return new ApiError(
    `${status} redirect from ${method} ${url} to ${target}; cardboard does not follow redirects, so the token is never sent to another address`,
    { method, url, status, serverMessage: `Location: ${target}`, response },
    { hint: 'If the new address is right, use it as the base URL (--base-url, or `cardboard board add` again).' },
  );
}

function networkError(method: string, url: string, err: unknown, timeoutMs: number, token: string): ApiError {
  const code = networkCode(err) ?? 'ENETWORK';
  const what =
    code === ANSWER_TIMEOUT
      ? `no complete answer within ${formatDuration(timeoutMs)}`
      : (NETWORK_TEXT[code] ?? oneLine(scrubSecret(err instanceof Error ? err.message : String(err), token), MESSAGE_COLUMNS));
  if (!code.endsWith('_TIMEOUT')) {
    const hint = 'Check the base URL (`cardboard board show`, --base-url or CARDBOARD_BASE_URL) and the network.';
    return new ApiError(`${method} ${url} failed: ${what} (${code})`, { method, url, code }, { hint, cause: err });
  }
  const hint = `Waited ${formatDuration(timeoutMs)}. ${TIMEOUT_ADVICE}`;
  return new ApiError(`${method} ${url} failed: ${what} (${code})`, { method, url, code, timeoutMs }, { hint, cause: err });
}

function decode(text: string, contentType: string, method: string, url: string, status: number, token: string): unknown {
  const declared = /json/i.test(contentType);
  // Spec 4: "Bodies are JSON", whatever the Content-Type says (text/plain, octet-stream...).
  if (!declared && !/^\s*[[{]/.test(text)) return text;
  if (!text.trim()) return null;
  try {
    return JSON.parse(text);
  } catch (err) {
    if (!declared) return text;
    // A 2xx whose body is not JSON: the write may have happened, so this is not a network error.
    throw new ApiError(
      `${method} ${url} answered ${status} with a body that is not valid JSON`,
      { method, url, status, serverMessage: oneLine(scrubSecret(text, token), MESSAGE_COLUMNS) },
      { cause: err },
    );
  }
}

/** Headers of an answer with our token scrubbed from every name and value (a server may echo what it was sent). */
function scrubHeaders(headers: HttpResponse['headers'], token: string): HttpResponse['headers'] {
  // No prototype: a header named `__proto__` is a header like any other.
  const out: HttpResponse['headers'] = emptyRecord();
  for (const [name, value] of Object.entries(headers)) {
    out[scrubSecret(name, token)] = Array.isArray(value) ? value.map((v) => scrubSecret(v, token)) : value === undefined ? undefined : scrubSecret(value, token);
  }
  return out;
}

/**
 * The core: one request, no retries. Sends x-token as a header (spec 5; never in the query),
 * JSON bodies with Content-Type: application/json (spec 4), treats any 2xx as success and turns
 * anything else into ApiError carrying the status and the server's message.
 */
export function createCore(opts: CoreOptions): Send {
  const { now } = opts;
  // Where each query-less path goes, worked out once: an import posts to one URL tens of thousands of times.
  const targets = new Map<string, { origin: string; path: string; shown: string }>();
  const target = (req: HttpRequest) => {
    const hit = req.query ? undefined : targets.get(req.path);
    if (hit) return hit;
    const url = new URL(joinUrl(opts.baseUrl, req.path, req.query));
    const found = { origin: url.origin, path: url.pathname + url.search, shown: displayUrl(url.toString()) };
    if (!req.query && targets.size < 100) targets.set(req.path, found);
    return found;
  };
  // The headers of every request, made once: undici reads them and changes nothing (frozen, so it could not).
  const plain = Object.freeze({ 'x-token': opts.token, 'user-agent': USER_AGENT, accept: 'application/json, text/plain;q=0.9, */*;q=0.5' });
  const json = Object.freeze({ ...plain, 'content-type': 'application/json' });
  const watch = new AbortWatch();
  const deadlines = new Deadlines();
  return async (req) => {
    const { origin, path, shown } = target(req);
    const body = req.bodyBytes ?? (req.body === undefined ? undefined : JSON.stringify(req.body));
    const headers = body === undefined ? plain : json;
    let res: RawResponse;
    let bytes: Buffer;
    try {
      res = await dispatchRequest(opts.dispatcher, {
        origin,
        path,
        method: req.method,
        headers,
        body,
        headersTimeout: opts.headersTimeoutMs,
        bodyTimeout: opts.bodyTimeoutMs,
        deadlineMs: opts.headersTimeoutMs,
        signal: req.signal,
        watch,
        deadlines,
      });
      bytes = decodedBytes(res.body, res.headers['content-encoding']);
    } catch (err) {
      if (req.signal?.aborted) throw new CancelledError('Interrupted.', { cause: err, inFlight: true });
      throw networkError(req.method, shown, err, opts.headersTimeoutMs, opts.token);
    }
    const status = res.statusCode;
    const resHeaders = res.headers as HttpResponse['headers'];
    // A raw request's answer, for its caller to show: without our token, in the bytes and in the headers.
    const raw = req.raw ? { headers: scrubHeaders(resHeaders, opts.token), body: scrubBytes(bytes, opts.token) } : undefined;
    if (status >= 300 && status < 400) throw redirectError(req.method, shown, status, resHeaders, opts.token, raw);
    const text = utf8(bytes);
    // The server's message is scrubbed of our token here, where the error is built, so the message, the
    // import's --results and --rejects files and every later reader get the clean text.
    if (status >= 400 || status < 200) throw statusError(req.method, shown, status, scrubSecret(text, opts.token), resHeaders, now(), opts.hints, body, raw);
    if (raw) return { status, headers: raw.headers, body: raw.body, url: shown, method: req.method };
    const contentType = String(resHeaders['content-type'] ?? '');
    const value = decode(text, contentType, req.method, shown, status, opts.token);
    // Data that echoes a real token (8+ characters) loses it too; includes() keeps the usual answer at one scan.
    const clean = opts.token.length >= MIN_SUBSTRING_SECRET && text.includes(opts.token) ? scrubValue(value, opts.token) : value;
    return { status, headers: resHeaders, body: clean, url: shown, method: req.method };
  };
}
