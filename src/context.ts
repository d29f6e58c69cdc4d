import type { ApiClient, ApiTarget } from './api/types.js';
import type { Clock } from './clock.js';
import { type ConfigStore, configStore } from './config/store.js';
import { type Host, hostOf, type InStream, type OutStream } from './host.js';
import { Cancellation, type Drain, noSignals } from './interrupt.js';
import { type Redactor, type SecretKeeper, Secrets } from './redact.js';
import type { Duration } from './units.js';

export { type Host, hostOf, type InStream, type OutStream, processHost } from './host.js';
export { isInteractive, useColor } from './io/streams.js';

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
 * redact, the clock, the run's stop signal and drain, and the API client, built on first use. It has every member
 * of the I/O layer's IoContext (src/io/streams.ts), so a command passes it to io/ as it is.
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
  /**
   * The values (tokens, signing keys) that must never be printed, for reading only: `secrets.redact(text)`.
   * A secret is added by whoever learns it, through the run's registry (redact.ts Secrets), never here.
   */
  readonly secrets: Redactor;
  /** The run's stop: every wait takes it (requests, sleeps, stdin, prompts). */
  readonly signal: AbortSignal;
  /** The run's drain, for a long run: the signal to take no new work, and the window in which Ctrl-C drains (interrupt.ts). */
  readonly drain: Drain;
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

/** The parts a context is built from; main passes the parsed globals, its cancellation and its secrets, tests what they need. */
export interface ContextParts extends Partial<Host> {
  globals?: GlobalOptions;
  /** The run's registry of secrets: the context reads it, the API session adds the credentials it uses. */
  secrets?: Secrets;
  cancel?: Cancellation;
  config?: ConfigStore;
  /** Builds the selected board's client instead of the real session (tests: a simulated service). */
  api?: (ctx: Context) => Promise<ApiClient>;
}

/** A builder's way to the run's context: called when the command runs, once main has built it. */
export type ContextRef = () => Context;

/**
 * A builder's way to the run's registry of secrets, for a command that learns one (a key read from stdin, a
 * token typed at a prompt) and hands it to its run function: called when the command runs, like ContextRef.
 */
export type SecretsRef = () => SecretKeeper;

/** The SecretsRef of a builder called outside main (a test): the command keeps what it learns to a registry of its own. */
export const ownSecrets: SecretsRef = () => new Secrets();

/** Build a context (frozen): the real process's parts by default; tests pass streams, env, clock, globals. */
export function createContext(parts: ContextParts = {}): Context {
  const host = hostOf(parts);
  let session: Promise<import('./api/session.js').ApiSession> | undefined;
  let selected: Promise<ApiClient> | undefined;
  const secrets = parts.secrets ?? new Secrets();
  const open = () => {
    session ??= import('./api/session.js').then((m) => m.openSession(ctx, secrets));
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
    secrets: secrets.reader,
    signal: cancel.signal,
    drain: cancel.draining(),
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

