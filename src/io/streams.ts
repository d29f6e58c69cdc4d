// The streams the I/O layer writes and reads, and what its functions read of a run. Defined here, below the
// run layer: a command's context (src/context.ts) has every member of IoContext, so it is passed as it is,
// and nothing in src/io/ imports the context.
import type { Readable, Writable } from 'node:stream';
import type { Clock } from '../clock.js';
import type { Drain } from '../interrupt.js';
import type { Redactor } from '../redact.js';

/**
 * A writable stream with the TTY facts the output layer needs (process.stdout, or a test buffer): its size,
 * and its file descriptor (a pager writes to the terminal itself; a stream without one is never paged).
 */
export type OutStream = Writable & { isTTY?: boolean; columns?: number; rows?: number; fd?: number };
/** A readable stream with its TTY fact (process.stdin, or a test buffer). */
export type InStream = Readable & { isTTY?: boolean; setRawMode?: (mode: boolean) => unknown };

/** What the I/O layer reads of a run; each function takes the members it uses (a Pick). */
export interface IoContext {
  readonly stdin: InStream;
  readonly stdout: OutStream;
  readonly stderr: OutStream;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** --quiet (silences notes and progress) and --no-pager (`pager: false`). */
  readonly globals: Readonly<{ quiet?: boolean; pager?: boolean }>;
  /** The run's secrets, for redaction of what a person reads. */
  readonly secrets: Redactor;
  readonly clock: Clock;
  /** The run's stop signal. */
  readonly signal: AbortSignal;
  /** The run's drain (a pager leaves Ctrl-C to itself through it). */
  readonly drain: Drain;
}

/** True when prompts may be shown: stdin and stdout are TTYs and CI is not set (a prompt on a silent open stdin waits for ever). */
export function isInteractive(io: Pick<IoContext, 'stdin' | 'stdout' | 'env'>): boolean {
  return Boolean(io.stdin.isTTY && io.stdout.isTTY && !io.env.CI);
}

/** True when colour may be written to the stream: a TTY and NO_COLOR unset. */
export function useColor(io: Pick<IoContext, 'stderr' | 'env'>, stream: OutStream = io.stderr): boolean {
  return Boolean(stream.isTTY) && !io.env.NO_COLOR && io.env.TERM !== 'dumb';
}
