// What exists before the command line is parsed. Apart from the context (context.ts) so that main, which needs
// the host before parsing, does not load the context's modules (the config store, redaction) on a run that
// never builds a context: `--help`, a usage error.
import { type Clock, realClock } from './clock.js';
import { processSignals, type SignalSource } from './interrupt.js';
import type { InStream, OutStream } from './io/streams.js';

export type { InStream, OutStream } from './io/streams.js';

/** What exists before the command line is parsed: the process's streams, environment, clock and signals. */
export interface Host {
  readonly stdin: InStream;
  readonly stdout: OutStream;
  readonly stderr: OutStream;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly clock: Clock;
  /** Where SIGINT/SIGTERM come from (the process, or a test firing them by hand). */
  readonly signals: SignalSource;
}

/** The real process's host. */
export function processHost(): Host {
  return {
    // Made when first read: Node builds process.stdin on first use (a pipe's or a terminal's stream loads
    // several modules), and most runs never read it.
    get stdin() {
      return process.stdin;
    },
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    clock: realClock,
    signals: processSignals,
  };
}

/** The process's host with the parts given (a part left undefined keeps the process's own, stdin still unmade). */
export function hostOf(parts: Partial<Host>): Host {
  const host = processHost();
  for (const [key, value] of Object.entries(parts)) if (value !== undefined) Object.defineProperty(host, key, { value, enumerable: true });
  return host;
}
