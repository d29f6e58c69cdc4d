// One request through undici's dispatch() with a handler of undici 7's controller API, the body
// collected as Buffers: request() would wrap each call in an AsyncResource and a Readable body stream.
// An import of tens of thousands of rows is made of these, so their cost bounds its rate
// (test/bench/peers/dispatch-handlers.mjs compares the ways of sending; docs/benchmarks.md has its figures).
import type { Dispatcher } from 'undici';
import type { HttpMethod } from './types.js';

/** What dispatchRequest needs: where (origin + path with query), what, and how long to wait. */
export interface RawRequest {
  origin: string;
  path: string;
  method: HttpMethod;
  headers: Readonly<Record<string, string>>;
  body?: string | Buffer;
  headersTimeout: number;
  bodyTimeout: number;
  /**
   * The whole answer's deadline, from this call: connect, headers and every byte of the body. undici's
   * bodyTimeout is between chunks, so a body trickled a byte a second would otherwise never time out.
   */
  deadlineMs?: number;
  signal?: AbortSignal;
  /** Where the signal's abort is heard: the client's one AbortWatch (else a listener of the request's own). */
  watch?: AbortWatch;
  /** Where the deadline is kept: the client's one Deadlines (else a timer of the request's own). */
  deadlines?: Deadlines;
  /**
   * At most this many bytes of the body are kept; the rest is read and dropped (an answer shown only by its
   * start: a receiver's answer to a webhook delivery). Unset: the whole body, as large as the dispatcher allows.
   */
  keepBytes?: number;
  /** Called when undici hands the request to a connected socket: what comes after is the server's time. */
  onWritten?: () => void;
}

/** The code of an answer that was not complete by its deadline (networkError names it). */
export const ANSWER_TIMEOUT = 'ERR_ANSWER_TIMEOUT';

/**
 * A request not answered in whole by its deadline (`deadlineMs`); `code` is UND_ERR_CONNECT_TIMEOUT when it
 * never got a connection (failure.ts: not sent), else ANSWER_TIMEOUT.
 */
export class MissedDeadline extends Error {
  constructor(
    readonly code: string,
    ms: number,
  ) {
    super(`no complete answer within ${ms} ms`);
  }
}

/** A whole response: status, headers by lower-case name (repeats as arrays), body bytes. */
export interface RawResponse {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** Something in flight that a signal's abort ends: a link of the AbortWatch's list. */
interface Abortable {
  aborted(): void;
  prev: Abortable | undefined;
  next: Abortable | undefined;
}

/**
 * The requests in flight under one signal, linked through themselves. A Set of them (add, then delete, for
 * every request) keeps more alive into the old generation during an import: V8 rehashes a Set's table as
 * it fills with deleted entries. A link costs two fields on an object that exists anyway.
 */
interface Watched {
  head: Abortable | undefined;
  tail: Abortable | undefined;
}

/**
 * The requests in flight that one signal ends, behind a single listener of its own. EventTarget's
 * addEventListener and removeEventListener cost more than the rest of a small request's own handling, and
 * an import sends tens of thousands of requests under one signal (the run's "stop now"). One per client.
 */
export class AbortWatch {
  private readonly watched = new WeakMap<AbortSignal, Watched>();

  /** Call `item.aborted()` when `signal` aborts (it has not yet). */
  add(signal: AbortSignal, item: Abortable): void {
    let list = this.watched.get(signal);
    if (list === undefined) {
      const fresh: Watched = { head: undefined, tail: undefined };
      list = fresh;
      this.watched.set(signal, fresh);
      signal.addEventListener(
        'abort',
        () => {
          this.watched.delete(signal);
          for (let each = fresh.head; each !== undefined; ) {
            const next = each.next;
            each.aborted();
            each = next;
          }
        },
        { once: true },
      );
    }
    // Appended, so an abort reaches requests in the order they started (rows are cut off in file order).
    item.prev = list.tail;
    if (list.tail) list.tail.next = item;
    else list.head = item;
    list.tail = item;
  }

  delete(signal: AbortSignal, item: Abortable): void {
    const list = this.watched.get(signal);
    if (list === undefined) return;
    if (item.prev) item.prev.next = item.next;
    else if (list.head === item) list.head = item.next;
    if (item.next) item.next.prev = item.prev;
    else if (list.tail === item) list.tail = item.prev;
    item.prev = undefined;
    item.next = undefined;
  }
}

/** Something in flight with a deadline (ms on the monotonic clock): a link of a Deadlines list. */
interface Timed {
  at: number;
  expired(): void;
  earlier: Timed | undefined;
  later: Timed | undefined;
}

/**
 * The deadlines of the requests in flight of one client, behind one timer: a list in deadline order (a
 * client's requests share the length of their deadline, so a new one goes last) and a timer for the first.
 * A timer of each request's own (setTimeout, then clearTimeout once answered) allocated and linked a Timeout
 * for every row of an import; here a request costs a clock read and two links. The timer is cleared when
 * nothing is in flight, so it never holds the process open.
 */
export class Deadlines {
  private first: Timed | undefined;
  private last: Timed | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** The deadline the timer is set for (Infinity: none). */
  private armedFor = Number.POSITIVE_INFINITY;
  private readonly fire = () => {
    this.timer = undefined;
    this.armedFor = Number.POSITIVE_INFINITY;
    const now = performance.now();
    while (this.first !== undefined && this.first.at <= now) {
      const x = this.first;
      this.delete(x);
      x.expired();
    }
    this.arm();
  };

  /** Call `item.expired()` at `item.at` unless deleted first. */
  add(item: Timed): void {
    let before = this.last;
    while (before !== undefined && before.at > item.at) before = before.earlier;
    item.earlier = before;
    item.later = before === undefined ? this.first : before.later;
    if (item.later) item.later.earlier = item;
    else this.last = item;
    if (before) before.later = item;
    else this.first = item;
    if (item.at < this.armedFor) this.arm();
  }

  /** Forget `item` (answered, or expired); nothing if it is not in the list. */
  delete(item: Timed): void {
    if (item.earlier === undefined && this.first !== item) return;
    if (item.earlier) item.earlier.later = item.later;
    else this.first = item.later;
    if (item.later) item.later.earlier = item.earlier;
    else this.last = item.earlier;
    item.earlier = undefined;
    item.later = undefined;
    if (this.first === undefined && this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
      this.armedFor = Number.POSITIVE_INFINITY;
    }
  }

  /** Set the timer for the first deadline, if it is not set for it already. */
  private arm(): void {
    const first = this.first;
    if (first === undefined || first.at === this.armedFor) return;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.armedFor = first.at;
    this.timer = setTimeout(this.fire, Math.max(0, first.at - performance.now()));
  }
}

function onDeadline(x: Exchange): void {
  x.expired();
}

/**
 * One request's exchange with undici: the handler (controller API), its deadline and its abort. A class,
 * not closures: a request allocates one object here, and an import makes tens of thousands of them.
 */
class Exchange implements Dispatcher.DispatchHandler, Abortable, Timed {
  private controller: Dispatcher.DispatchController | undefined;
  private settled = false;
  private statusCode = 0;
  private headers: RawResponse['headers'] | undefined;
  /** The body's first chunk, and the rest once there is more than one (most answers come in one). */
  private first: Buffer | undefined;
  private more: Buffer[] | undefined;
  /** Body bytes seen so far, counted only for a request that keeps part of its body (keepBytes). */
  private seen = 0;
  private late: Error | undefined;
  private readonly timer: NodeJS.Timeout | undefined;
  private readonly listener: (() => void) | undefined;
  prev: Abortable | undefined = undefined;
  next: Abortable | undefined = undefined;
  at = 0;
  earlier: Timed | undefined = undefined;
  later: Timed | undefined = undefined;

  constructor(
    private readonly req: RawRequest,
    private readonly resolve: (res: RawResponse) => void,
    private readonly reject: (err: unknown) => void,
  ) {
    if (req.deadlineMs !== undefined) {
      if (req.deadlines === undefined) this.timer = setTimeout(onDeadline, req.deadlineMs, this);
      else {
        this.at = performance.now() + req.deadlineMs;
        req.deadlines.add(this);
      }
    }
    const { signal } = req;
    if (signal === undefined) return;
    if (req.watch) req.watch.add(signal, this);
    else {
      this.listener = () => this.aborted();
      signal.addEventListener('abort', this.listener, { once: true });
    }
  }

  aborted(): void {
    const reason = this.req.signal!.reason as Error;
    this.controller?.abort(reason);
    if (this.finish()) this.reject(reason);
  }

  expired(): void {
    // No controller yet: the request never got a connection, so it was not sent (failure.ts: not-sent).
    const late = new MissedDeadline(this.controller === undefined ? 'UND_ERR_CONNECT_TIMEOUT' : ANSWER_TIMEOUT, this.req.deadlineMs!);
    this.late = late;
    // Aborting destroys the request and its socket: nothing more of this body is read.
    this.controller?.abort(late);
    if (this.finish()) this.reject(late);
  }

  /** True the first time: the caller settles the promise. */
  private finish(): boolean {
    if (this.settled) return false;
    this.settled = true;
    if (this.timer) clearTimeout(this.timer);
    else this.req.deadlines?.delete(this);
    const { signal } = this.req;
    if (signal !== undefined) {
      if (this.listener) signal.removeEventListener('abort', this.listener);
      else this.req.watch?.delete(signal, this);
    }
    return true;
  }

  onRequestStart(ctl: Dispatcher.DispatchController): void {
    this.controller = ctl;
    this.req.onWritten?.();
    // Aborted while it waited for a socket: the promise is already rejected, stop it here.
    const { signal } = this.req;
    if (signal?.aborted) ctl.abort(signal.reason);
    else if (this.late) ctl.abort(this.late);
  }

  // undici hands headers already parsed: lower-case names, a repeated header as an array.
  onResponseStart(_ctl: Dispatcher.DispatchController, status: number, parsed: RawResponse['headers']): void {
    this.statusCode = status;
    this.headers = parsed;
  }

  onResponseData(_ctl: Dispatcher.DispatchController, chunk: Buffer): void {
    const keep = this.req.keepBytes;
    if (keep !== undefined) {
      const room = keep - this.seen;
      this.seen += chunk.length;
      if (room <= 0) return;
      if (chunk.length > room) chunk = chunk.subarray(0, room);
    }
    if (this.first === undefined) this.first = chunk;
    else (this.more ??= [this.first]).push(chunk);
  }

  onResponseEnd(): void {
    if (!this.finish()) return;
    const body = this.more !== undefined ? Buffer.concat(this.more) : (this.first ?? Buffer.alloc(0));
    this.resolve({ statusCode: this.statusCode, headers: this.headers ?? {}, body });
  }

  onResponseError(_ctl: Dispatcher.DispatchController, err: Error): void {
    if (this.finish()) this.reject(err);
  }
}

/**
 * Send one request and read its whole body; rejects with undici's error (codes intact) on failure,
 * or with the signal's reason on abort: at once when the signal fires, even while the request still
 * waits for a connection (undici then drops it as soon as it starts).
 */
export function dispatchRequest(dispatcher: Dispatcher, req: RawRequest): Promise<RawResponse> {
  const { signal } = req;
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    dispatcher.dispatch(
      { origin: req.origin, path: req.path, method: req.method, headers: req.headers, body: req.body, headersTimeout: req.headersTimeout, bodyTimeout: req.bodyTimeout },
      new Exchange(req, resolve, reject),
    );
  });
}
