// Errors that cross from one thread to another (a worker that runs a query, the thread that talks to a database
// server): a structured clone keeps an Error's message and stack, not its class, hint or exit code, so an error
// travels as plain data and is made again, on the other side, as it was thrown.
import { CardboardError, UsageError } from './errors.js';

/** An error as data: one meant for the user (its class, message, hint and exit code), or any other (a bug). */
export type WireError =
  | { kind: 'usage' | 'cardboard'; message: string; hint?: string; suggestion?: string; exitCode: number; cause?: WireCause }
  | { kind: 'bug'; name: string; message: string; stack?: string };

/** The cause of an error for the user, as --verbose shows it; `code` is the engine's (SQLITE_ERROR, 28P01, ECONNREFUSED…). */
interface WireCause {
  name: string;
  message: string;
  stack?: string;
  code?: string;
}

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
