/**
 * Exit codes of the CLI contract (README, "Exit codes"). main.ts is the only place that applies them. A run
 * stopped by SIGINT or SIGTERM ends by that signal after its cleanup (interrupt.ts exitBySignal): a shell
 * reports it as 128 + the signal's number, 130 or 143, and a loop running it stops.
 */
export const ExitCode = {
  ok: 0,
  failure: 1,
  usage: 2,
  partial: 3,
  auth: 4,
  /** Done, but not as asked: `card put --id` made a new card instead of updating that one. */
  notAsAsked: 5,
  /** Interrupted: Ctrl-C (death by SIGINT, 128 + 2), or the user declined the import's preview (an exit with 130). */
  interrupted: 130,
  /** Stopped by SIGTERM (death by it, 128 + 15). */
  terminated: 143,
} as const;

interface CardboardErrorOptions {
  hint?: string;
  exitCode?: number;
  cause?: unknown;
}

/** An error meant for the user: one line of message, an optional hint line, and an exit code. */
export class CardboardError extends Error {
  readonly hint?: string;
  readonly exitCode: number;
  /** How the message is labelled on stderr: `error:`, or `warning:` for a run that did its work (exit 5). */
  readonly label: 'error' | 'warning' = 'error';

  constructor(message: string, options: CardboardErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.hint = options.hint;
    this.exitCode = options.exitCode ?? ExitCode.failure;
  }
}

/**
 * Bad flags, unknown field, unmapped column: exit 2, and nothing was sent. `suggestion` is the word the
 * user most likely meant (a command, a flag, a board alias), shown as `Did you mean X?`.
 */
export class UsageError extends CardboardError {
  readonly suggestion?: string;

  constructor(message: string, options: Omit<CardboardErrorOptions, 'exitCode'> & { suggestion?: string } = {}) {
    const { suggestion, ...rest } = options;
    super(message, { ...rest, exitCode: ExitCode.usage });
    if (suggestion !== undefined) this.suggestion = suggestion;
  }
}

/** No token, or the server refused it (401/403): exit 4. */
export class AuthError extends CardboardError {
  constructor(message: string, options: Omit<CardboardErrorOptions, 'exitCode'> = {}) {
    super(message, {
      hint: 'Check the token, or store it again with `cardboard board add <alias> --url <POST URL>`.',
      ...options,
      exitCode: ExitCode.auth,
    });
  }
}

/** A run that finished but left rows rejected or uncertain (an import): exit 3. */
export class PartialError extends CardboardError {
  constructor(message: string, options: Omit<CardboardErrorOptions, 'exitCode'> = {}) {
    super(message, { ...options, exitCode: ExitCode.partial });
  }
}

/**
 * The run did its work, but not the work asked for: `card put --id X` created a new card instead of
 * updating X (spec 4.3 rules 3-4). Its output is printed as usual; the message is a warning; exit 5, so a
 * script can tell. Thrown after the output, never before: nothing is undone.
 */
export class NotAsAskedError extends CardboardError {
  override readonly label = 'warning';

  constructor(message: string, options: Omit<CardboardErrorOptions, 'exitCode'> = {}) {
    super(message, { ...options, exitCode: ExitCode.notAsAsked });
  }
}

/**
 * The user interrupted the run (Ctrl-C, or declined the import's preview): exit 130. A run stopped by a
 * signal it received ends by that signal whatever it throws (main.ts); `signal` names one that ended the
 * run without reaching it: Ctrl-C typed at a prompt (a key, the terminal being raw), or a pager killed by it.
 */
export class CancelledError extends CardboardError {
  /** A request was cut off after it may have left: a POST may have been applied. */
  readonly inFlight: boolean;
  /** The signal the run ends by (main.ts), when the run itself never received it. */
  readonly signal?: 'SIGINT' | 'SIGTERM';

  constructor(message = 'Interrupted.', options: Omit<CardboardErrorOptions, 'exitCode'> & { inFlight?: boolean; signal?: 'SIGINT' | 'SIGTERM' } = {}) {
    const { inFlight, signal, ...rest } = options;
    super(message, { ...rest, exitCode: signal === 'SIGTERM' ? ExitCode.terminated : ExitCode.interrupted });
    this.inFlight = inFlight === true;
    if (signal !== undefined) this.signal = signal;
  }
}

/** Where a request failed: the server's answer (status set) or the network (status undefined). */
interface ApiErrorDetails {
  method: string;
  url: string;
  status?: number;
  /** The server's own message, cleaned to one short line. */
  serverMessage?: string;
  /** Seconds the server asked us to wait (429/503), when it said. */
  retryAfter?: number;
  /** Network error code (ECONNREFUSED, UND_ERR_HEADERS_TIMEOUT, ...). */
  code?: string;
  /** A try that timed out: how long it waited (the --timeout of one try). */
  timeoutMs?: number;
  /** A 400 or 413 answer: the bytes of the body sent (what a server that limits sizes may have refused). */
  sentBytes?: number;
  /** The whole answer, kept only for a request that asked for it raw (`cardboard api`): its caller shows it. */
  response?: ApiResponse;
}

/** An answer's headers (lower-case names, repeats as arrays) and body bytes, the token scrubbed from both. */
export interface ApiResponse {
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** A request that failed: an HTTP status >= 400 or a network failure (status undefined). */
export class ApiError extends CardboardError {
  readonly method: string;
  readonly url: string;
  readonly status?: number;
  readonly serverMessage?: string;
  readonly retryAfter?: number;
  readonly code?: string;
  readonly timeoutMs?: number;
  readonly sentBytes?: number;
  readonly response?: ApiResponse;

  constructor(message: string, details: ApiErrorDetails, options: Omit<CardboardErrorOptions, 'exitCode'> = {}) {
    const auth = details.status === 401 || details.status === 403;
    super(message, { ...options, exitCode: auth ? ExitCode.auth : ExitCode.failure });
    this.method = details.method;
    this.url = details.url;
    this.status = details.status;
    this.serverMessage = details.serverMessage;
    this.retryAfter = details.retryAfter;
    this.code = details.code;
    this.timeoutMs = details.timeoutMs;
    this.sentBytes = details.sentBytes;
    if (details.response !== undefined) this.response = details.response;
  }
}
