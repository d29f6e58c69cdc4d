// What passes between `cardboard query` and the thread that runs its statement (thread.ts, worker.ts): the
// job, the replies, and errors, which reach the other thread as plain data (a structured clone keeps an
// Error's message and stack, not its class, hint or exit code) and are made again as they were thrown.
import { CardboardError, UsageError } from '../../errors.js';
import type { MirrorBoard } from '../../mirror/types.js';

/** What the thread runs: the statement over the mirror at `location`, which must hold `board`. */
export interface StatementJob {
  location: string;
  board: MirrorBoard;
  sql: string;
  /** Rows wanted at most (a terminal table's, which stops at a count): the thread runs SQLite no further. */
  limit?: number;
  /**
   * One Int32: the batches the main thread has written so far, counted by it. The thread compares it with
   * the batches it sent, to wait when enough are waiting and to send at once when none is.
   */
  taken: SharedArrayBuffer;
}

/** An error as data: one meant for the user (its class, message, hint and exit code), or any other (a bug). */
export type WireError =
  | { kind: 'usage' | 'cardboard'; message: string; hint?: string; suggestion?: string; exitCode: number; cause?: WireCause }
  | { kind: 'bug'; name: string; message: string; stack?: string };

/** The cause of an error for the user, as --verbose shows it; `code` is SQLite's (SQLITE_ERROR, ...). */
interface WireCause {
  name: string;
  message: string;
  stack?: string;
  code?: string;
}

/** What the thread sends: the columns first, then batches of rows, then the end or an error. */
export type Reply = { type: 'columns'; columns: string[] } | { type: 'rows'; rows: unknown[][] } | { type: 'end' } | { type: 'error'; error: WireError };

function causeOf(err: unknown): WireCause | undefined {
  if (!(err instanceof Error)) return undefined;
  const code = (err as { code?: unknown }).code;
  return { name: err.name, message: err.message, stack: err.stack, ...(typeof code === 'string' ? { code } : {}) };
}

/** `err` as data. */
export function toWire(err: unknown): WireError {
  if (err instanceof CardboardError) {
    const suggestion = err instanceof UsageError ? err.suggestion : undefined;
    return { kind: err instanceof UsageError ? 'usage' : 'cardboard', message: err.message, hint: err.hint, exitCode: err.exitCode, cause: causeOf(err.cause), ...(suggestion === undefined ? {} : { suggestion }) };
  }
  const e = err instanceof Error ? err : new Error(String(err));
  return { kind: 'bug', name: e.name, message: e.message, stack: e.stack };
}

/** The error `wire` describes, made again: a UsageError, a CardboardError with its exit code, or an Error. */
export function fromWire(wire: WireError): Error {
  if (wire.kind === 'bug') return Object.assign(new Error(wire.message), { name: wire.name, stack: wire.stack });
  const cause = wire.cause === undefined ? undefined : Object.assign(new Error(wire.cause.message), wire.cause);
  if (wire.kind === 'usage') return new UsageError(wire.message, { hint: wire.hint, suggestion: wire.suggestion, cause });
  return new CardboardError(wire.message, { hint: wire.hint, exitCode: wire.exitCode, cause });
}
