import { ApiError } from '../errors.js';
import type { Send } from './types.js';

/** Wrap `next` so each try logs one line: method, URL, status (or network code) and milliseconds by `now`, the run's clock. */
export function withDebugLog(next: Send, log: (line: string) => void, now: () => number): Send {
  return async (req) => {
    const started = now();
    const elapsed = () => `${Math.round(now() - started)} ms`;
    try {
      const res = await next(req);
      log(`${res.method} ${res.url} → ${res.status} (${elapsed()})`);
      return res;
    } catch (err) {
      if (err instanceof ApiError) {
        log(`${err.method} ${err.url} → ${err.status ?? err.code ?? 'failed'} (${elapsed()})`);
      }
      throw err;
    }
  };
}
