import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import type { ContextParts } from '../../src/context.js';
import type { SignalSource } from '../../src/interrupt.js';
import { main } from '../../src/main.js';
import { BufferStream } from '../io/buffers.js';

/**
 * How long a child process a test starts may run before it is killed: a budget for hangs only, far past
 * what a loaded machine needs, and under vitest's 120 s test timeout so the test reports the child's end.
 */
export const CHILD_KILL_MS = 100_000;

/** Absolute path of the built entry point that every end-to-end test spawns. */
export const BIN = fileURLToPath(new URL('../../bin/cardboard.js', import.meta.url));

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  /** Extra environment; CARDBOARD_* from the outer environment are never inherited. */
  env?: Record<string, string | undefined>;
  /** Written to the child's stdin, then stdin is closed. */
  input?: string | Buffer;
  /** CARDBOARD_CONFIG_DIR for the run; a fresh temporary directory when omitted. */
  configDir?: string;
  cwd?: string;
  /** Kill the child after this long (default CHILD_KILL_MS). */
  timeoutMs?: number;
  /** Spawn the built binary instead of running main() in this process (signals, pipes, the entry point). */
  spawn?: boolean;
  /** In-process only: parts of the run's context to replace (a simulated clock, a fake api()), given the streams and env. */
  context?: (parts: ContextParts) => ContextParts;
}

/** A fresh temporary directory (config dir, output files). */
export function tempDir(prefix = 'cardboard-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/**
 * Environment for a child run: the outer env without CARDBOARD_*, CI on, colour off, a fresh config dir,
 * and an XDG_CACHE_HOME of its own so no test writes the schema cache under the real home: `<configDir>-xdg-cache`
 * beside the config dir (runs sharing a config dir share a cache, as on one machine), else a fresh directory.
 */
export function childEnv(opts: RunOptions = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('CARDBOARD_')) env[k] = v;
  Object.assign(env, { CI: '1', NO_COLOR: '1', CARDBOARD_CONFIG_DIR: opts.configDir ?? tempDir(), XDG_CACHE_HOME: opts.configDir ? `${opts.configDir}-xdg-cache` : tempDir('cardboard-cache-') }, opts.env);
  for (const [k, v] of Object.entries(env)) if (v === undefined) delete env[k];
  return env;
}

/** Run `node bin/cardboard.js ...args` as a child process and collect stdout, stderr and the exit code. */
export function runCli(args: string[], opts: RunOptions = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: opts.cwd,
      env: childEnv(opts),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? CHILD_KILL_MS);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({
        code,
        signal,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
      });
    });
    child.stdin.on('error', () => {});
    child.stdin.end(opts.input ?? '');
  });
}

/** No process signals reach an in-process run; a second Ctrl-C would be a test bug. */
const NO_SIGNALS: SignalSource = {
  listen: () => () => {},
  exitNow: (signal) => {
    throw new Error(`exitNow(${signal}) in an in-process run`);
  },
};

/**
 * Run the CLI in this process: `main(args)` with buffer streams (not TTYs), the same environment a child
 * would get, and stdin from `input`. Same result shape as runCli, at a fraction of the cost of a spawn;
 * what only a real process shows (signals, exit on drain, EPIPE, the entry point) stays with runCli.
 */
export async function runMain(args: string[], opts: RunOptions = {}): Promise<CliResult> {
  if (opts.spawn) return runCli(args, opts);
  const stdout = new BufferStream(false);
  const stderr = new BufferStream(false);
  const parts: ContextParts = { stdout, stderr, stdin: Readable.from([Buffer.from(opts.input ?? '')]), env: childEnv(opts), signals: NO_SIGNALS };
  const code = await main(args, { ...parts, ...opts.context?.(parts) });
  return { code, signal: null, stdout: stdout.text, stderr: stderr.text };
}
