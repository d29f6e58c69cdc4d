import type { Readable, Writable } from 'node:stream';
import type { ApiClient, ApiTarget } from './api/types.js';
import { type Clock, realClock } from './clock.js';
import { processSignals, type SignalSource } from './interrupt.js';
import { redactSecrets } from './redact.js';
import type { Duration } from './units.js';

/**
 * A writable stream with the TTY facts the output layer needs (process.stdout, or a test buffer): its size,
 * and its file descriptor (a pager writes to the terminal itself; a stream without one is never paged).
 */
export type OutStream = Writable & { isTTY?: boolean; columns?: number; rows?: number; fd?: number };
/** A readable stream with its TTY fact (process.stdin, or a test buffer). */
export type InStream = Readable & { isTTY?: boolean; setRawMode?: (mode: boolean) => unknown };

/** Options every command accepts, before or after the command name (program.ts declares them). */
export interface GlobalOptions {
  board?: string;
  baseUrl?: string;
  /** --timeout, as written and in milliseconds. */
  timeout?: Duration;
  /** --rate in requests per second. */
  rate?: number;
  insecure?: boolean;
  verbose?: boolean;
  quiet?: boolean;
  /** false with --no-pager: long output on a terminal is printed directly (src/io/pager.ts). */
  pager?: boolean;
}

/**
 * What every command receives (gh's factory): streams with their TTY facts, env, parsed global options,
 * secrets to redact, the clock, the stop signals, and the API client, built on first use.
 */
export interface Context {
  stdin: InStream;
  stdout: OutStream;
  stderr: OutStream;
  env: Record<string, string | undefined>;
  /** Global options as parsed for the running command (set before the action runs). */
  globals: GlobalOptions;
  /** Values (tokens, signing keys) that must never be printed; redact() replaces them. */
  secrets: Set<string>;
  /** Aborted on SIGTERM (main.ts), so requests in flight end with exit 130. */
  signal: AbortSignal;
  /** Where SIGINT/SIGTERM come from; long runs watch them through interruptible(). */
  signals: SignalSource;
  clock: Clock;
  /**
   * The client of the selected board (flags > env > config), built on first call with the global options
   * (--timeout, --rate, --verbose, --insecure). Every client of a run shares one dispatcher and one rate gate.
   */
  api(): Promise<ApiClient>;
  /** A client for explicit credentials, sharing the same dispatcher and gate. */
  apiFor(target: ApiTarget): Promise<ApiClient>;
  /** Release what api() opened (the keep-alive dispatcher). main.ts calls it when the command ends. */
  close(): Promise<void>;
}

/** Build a context: the real process's by default; tests override streams, env, clock and signals. */
export function createContext(overrides: Partial<Context> = {}): Context {
  let session: Promise<import('./api/session.js').ApiSession> | undefined;
  let selected: Promise<ApiClient> | undefined;
  const open = () => {
    session ??= import('./api/session.js').then((m) => m.openSession(ctx));
    return session;
  };
  const ctx: Context = {
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    globals: {},
    secrets: new Set(),
    signal: new AbortController().signal,
    signals: processSignals,
    clock: realClock,
    api: () => {
      selected ??= open().then((s) => s.selected());
      return selected;
    },
    apiFor: async (target) => (await open()).client(target),
    async close() {
      if (!session) return;
      const s = session;
      session = undefined;
      selected = undefined;
      await (await s.catch(() => undefined))?.close();
    },
    ...overrides,
  };
  return ctx;
}

/** True when prompts may be shown: stdin and stdout are TTYs and CI is not set (PITFALLS: prompts hang otherwise). */
export function isInteractive(ctx: Context): boolean {
  return Boolean(ctx.stdin.isTTY && ctx.stdout.isTTY && !ctx.env.CI);
}

/** True when colour may be written to the stream: a TTY and NO_COLOR unset. */
export function useColor(ctx: Context, stream: OutStream = ctx.stderr): boolean {
  return Boolean(stream.isTTY) && !ctx.env.NO_COLOR && ctx.env.TERM !== 'dumb';
}

/** The last safety net over printed text: every known secret of 8+ characters replaced by "***" (see src/redact.ts). */
export function redact(ctx: Context, text: string): string {
  return redactSecrets(ctx.secrets, text);
}
