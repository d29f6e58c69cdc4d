import type { Readable, Writable } from 'node:stream';
import { redactSecrets } from './redact.js';

/** A writable stream with the TTY facts the output layer needs (process.stdout, or a test buffer). */
export type OutStream = Writable & { isTTY?: boolean; columns?: number };
/** A readable stream with its TTY fact (process.stdin, or a test buffer). */
export type InStream = Readable & { isTTY?: boolean; setRawMode?: (mode: boolean) => unknown };

/** Options every command accepts, before or after the command name (main.ts declares them). */
export interface GlobalOptions {
  board?: string;
  baseUrl?: string;
  timeout?: string;
  rate?: string;
  insecure?: boolean;
  verbose?: boolean;
  quiet?: boolean;
}

/** What every command receives: streams with their TTY facts, env, parsed global options, secrets to redact. */
export interface Context {
  stdin: InStream;
  stdout: OutStream;
  stderr: OutStream;
  env: Record<string, string | undefined>;
  /** Global options as parsed for the running command (set by main.ts before the action runs). */
  globals: GlobalOptions;
  /** Values (tokens, signing keys) that must never be printed; redact() replaces them. */
  secrets: Set<string>;
  /** Aborted on the first SIGINT/SIGTERM while a command that watches it runs. */
  signal: AbortSignal;
  /** Exit code a command may set without throwing (main.ts returns it). */
  exitCode: number;
  now(): Date;
}

/** Build the context of a real process run. Tests build their own with string buffers. */
export function createContext(overrides: Partial<Context> = {}): Context {
  return {
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    globals: {},
    secrets: new Set(),
    signal: new AbortController().signal,
    exitCode: 0,
    now: () => new Date(),
    ...overrides,
  };
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
