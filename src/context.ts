import type { ApiClient, ApiTarget } from './api/types.js';
import type { Clock } from './clock.js';
import { type ConfigStore, configStore } from './config/store.js';
import { type Host, hostOf, type InStream, type OutStream } from './host.js';
import { Cancellation, noSignals } from './interrupt.js';
import { redactSecrets } from './redact.js';
import type { Duration } from './units.js';

export { type Host, hostOf, type InStream, type OutStream, processHost } from './host.js';

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
 * What every command receives (gh's factory), built once by main after parsing and never written to again:
 * the streams with their TTY facts, env, the parsed global options, the config store, the secrets to
 * redact, the clock, the run's cancellation, and the API client, built on first use.
 */
export interface Context {
  readonly stdin: InStream;
  readonly stdout: OutStream;
  readonly stderr: OutStream;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Global options as parsed for the running command. */
  readonly globals: Readonly<GlobalOptions>;
  /** The one place the config file is read and written. */
  readonly config: ConfigStore;
  /** Values (tokens, signing keys) that must never be printed; redact() replaces them. */
  readonly secrets: Set<string>;
  /** The run's cancellation: `cancel.signal` stops now, `cancel.drain` takes no new work (interrupt.ts). */
  readonly cancel: Cancellation;
  /** `cancel.signal`: every wait takes it (requests, sleeps, stdin, prompts). */
  readonly signal: AbortSignal;
  readonly clock: Clock;
  /**
   * The client of the selected board (flags > env > config), built on first call with the global options
   * (--timeout, --rate, --verbose, --insecure). Every client of a run shares one dispatcher and one rate gate.
   */
  api(): Promise<ApiClient>;
  /** A client for explicit credentials, sharing the same dispatcher and gate. */
  apiFor(target: ApiTarget): Promise<ApiClient>;
  /** Release what api() opened (the keep-alive dispatcher). main calls it when the command ends. */
  close(): Promise<void>;
}

/** The parts a context is built from; main passes the parsed globals and its cancellation, tests what they need. */
export interface ContextParts extends Partial<Host> {
  globals?: GlobalOptions;
  secrets?: Set<string>;
  cancel?: Cancellation;
  config?: ConfigStore;
  /** Builds the selected board's client instead of the real session (tests: a simulated service). */
  api?: (ctx: Context) => Promise<ApiClient>;
}

/** A builder's way to the run's context: called when the command runs, once main has built it. */
export type ContextRef = () => Context;

/** Build a context (frozen): the real process's parts by default; tests pass streams, env, clock, globals. */
export function createContext(parts: ContextParts = {}): Context {
  const host = hostOf(parts);
  let session: Promise<import('./api/session.js').ApiSession> | undefined;
  let selected: Promise<ApiClient> | undefined;
  const open = () => {
    session ??= import('./api/session.js').then((m) => m.openSession(ctx));
    return session;
  };
  // A context built outside main (a test, a library caller) hears no process signal unless given a source.
  const cancel = parts.cancel ?? new Cancellation(parts.signals ?? noSignals, host.clock);
  const ctx: Context = Object.freeze({
    // Read through: the process's stdin is made only if the command reads it (host.ts).
    get stdin() {
      return host.stdin;
    },
    stdout: host.stdout,
    stderr: host.stderr,
    env: host.env,
    clock: host.clock,
    globals: Object.freeze({ ...parts.globals }),
    config: parts.config ?? configStore(host.env),
    secrets: parts.secrets ?? new Set<string>(),
    cancel,
    signal: cancel.signal,
    api: () => {
      selected ??= parts.api ? parts.api(ctx) : open().then((s) => s.selected());
      return selected;
    },
    apiFor: async (target: ApiTarget) => (await open()).client(target),
    async close() {
      if (!session) return;
      const s = session;
      session = undefined;
      selected = undefined;
      await (await s.catch(() => undefined))?.close();
    },
  });
  return ctx;
}

/** True when prompts may be shown: stdin and stdout are TTYs and CI is not set (a prompt on a silent open stdin waits for ever). */
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
