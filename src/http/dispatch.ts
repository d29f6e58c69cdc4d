// One request through undici's dispatch() with a handler of undici 7's controller API, the body
// collected as Buffers. request() wraps each call in an AsyncResource and a Readable body stream.
// test/bench/peers/dispatch-handlers.mjs, 10,000 POSTs x 7 interleaved rounds, 8 connections to the
// emulator on loopback, medians of CPU µs a request on a busy 2-core VM, two runs (issue 9): this handler
// 94.6 / 98.3, the deprecated onConnect/onHeaders handler it replaced 92.5 / 94.9 (undici wraps a new-API
// handler in an adapter; within the rounds' spread), request() 136.7 / 146.0.
// An import of tens of thousands of rows is made of these (issue 6: within 0.9x of a load generator).
import type { Dispatcher } from 'undici';

/** What dispatchRequest needs: where (origin + path with query), what, and how long to wait. */
export interface RawRequest {
  origin: string;
  path: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  headersTimeout: number;
  bodyTimeout: number;
  /**
   * The whole answer's deadline, from this call: connect, headers and every byte of the body. undici's
   * bodyTimeout is between chunks, so a body trickled a byte a second would otherwise never time out.
   */
  deadlineMs?: number;
  signal?: AbortSignal;
}

/** The code of an answer that was not complete by its deadline (networkError names it). */
export const ANSWER_TIMEOUT = 'ERR_ANSWER_TIMEOUT';

/** A whole response: status, headers by lower-case name (repeats as arrays), body bytes. */
export interface RawResponse {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
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
    let controller: Dispatcher.DispatchController | undefined;
    let settled = false;
    let statusCode = 0;
    let headers: RawResponse['headers'] = {};
    const chunks: Buffer[] = [];
    let late: Error | undefined;
    const onAbort = () => {
      controller?.abort(signal!.reason);
      finish(() => reject(signal!.reason));
    };
    const onDeadline = () => {
      // No controller yet: the request never got a connection, so it was not sent (failure.ts: not-sent).
      const code = controller === undefined ? 'UND_ERR_CONNECT_TIMEOUT' : ANSWER_TIMEOUT;
      late = Object.assign(new Error(`no complete answer within ${req.deadlineMs} ms`), { code });
      // Aborting destroys the request and its socket: nothing more of this body is read.
      controller?.abort(late);
      finish(() => reject(late));
    };
    const timer = req.deadlineMs === undefined ? undefined : setTimeout(onDeadline, req.deadlineMs);
    const finish = (settle: () => void) => {
      if (settled) return;
      settled = true;
      if (timer) clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      settle();
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(ctl) {
        controller = ctl;
        // Aborted while it waited for a socket: the promise is already rejected, stop it here.
        if (signal?.aborted) ctl.abort(signal.reason);
        else if (late) ctl.abort(late);
      },
      // undici hands headers already parsed: lower-case names, a repeated header as an array.
      onResponseStart(_ctl, status, parsed) {
        statusCode = status;
        headers = parsed;
      },
      onResponseData(_ctl, chunk) {
        chunks.push(chunk);
      },
      onResponseEnd() {
        finish(() => resolve({ statusCode, headers, body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks) }));
      },
      onResponseError(_ctl, err) {
        finish(() => reject(err));
      },
    };
    dispatcher.dispatch(
      { origin: req.origin, path: req.path, method: req.method, headers: req.headers, body: req.body, headersTimeout: req.headersTimeout, bodyTimeout: req.bodyTimeout },
      handler,
    );
  });
}
