// One request through undici's dispatch() with a plain handler, the body collected as Buffers.
// request() wraps each call in an AsyncResource and a Readable body stream; measured on loopback with
// 8 connections that costs ~52-59 µs of CPU a POST against ~43-45 µs here, which is what an import
// of tens of thousands of rows is made of (issue 6: import within 0.9× of a load generator).
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
  signal?: AbortSignal;
}

/** A whole response: status, headers by lower-case name (repeats as arrays), body bytes. */
export interface RawResponse {
  statusCode: number;
  headers: Record<string, string | string[]>;
  body: Buffer;
}

function parseHeaders(raw: Buffer[]): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const key = raw[i]!.toString('latin1').toLowerCase();
    const value = raw[i + 1]!.toString('latin1');
    const prev = out[key];
    out[key] = prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value];
  }
  return out;
}

/** Send one request and read its whole body; rejects with undici's error (codes intact) on failure or abort. */
export function dispatchRequest(dispatcher: Dispatcher, req: RawRequest): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const { signal } = req;
    let statusCode = 0;
    let headers: Record<string, string | string[]> = {};
    const chunks: Buffer[] = [];
    let onAbort: (() => void) | undefined;
    const done = () => {
      if (onAbort) signal?.removeEventListener('abort', onAbort);
    };
    dispatcher.dispatch(
      { origin: req.origin, path: req.path, method: req.method, headers: req.headers, body: req.body, headersTimeout: req.headersTimeout, bodyTimeout: req.bodyTimeout },
      {
        onConnect(abort: (err?: Error) => void) {
          if (!signal) return;
          if (signal.aborted) return abort(signal.reason);
          onAbort = () => abort(signal.reason);
          signal.addEventListener('abort', onAbort, { once: true });
        },
        onHeaders(status: number, rawHeaders: Buffer[]) {
          statusCode = status;
          headers = parseHeaders(rawHeaders);
          return true;
        },
        onData(chunk: Buffer) {
          chunks.push(chunk);
          return true;
        },
        onComplete() {
          done();
          resolve({ statusCode, headers, body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks) });
        },
        onError(err: Error) {
          done();
          reject(err);
        },
      } as unknown as Dispatcher.DispatchHandler,
    );
  });
}
