// What ctx.api() builds on first use: one keep-alive dispatcher and one rate gate for the whole run, and
// the clients over them. Built lazily so that commands that make no request never load undici.
import type { Dispatcher } from 'undici';
import { resolveCredentials, tokenHints } from '../config/resolve.js';
import { notice } from '../io/notice.js';
import type { SecretKeeper } from '../redact.js';
import { createDispatcher, createHttp, Pacer } from '../http/index.js';
import { checkBaseUrl } from '../http/url.js';
import { apiOver } from './index.js';
import type { ApiClient, ApiContext, ApiTarget } from './types.js';

/** The run's HTTP resources and the clients built over them. */
export interface ApiSession {
  /** The client of the board selected by flags > env > config. */
  selected(): Promise<ApiClient>;
  /** A client for explicit credentials. */
  client(target: ApiTarget): Promise<ApiClient>;
  /** Close the dispatcher (idle keep-alive sockets would otherwise hold the process open). */
  close(): Promise<void>;
}

/** Where each wait for a rate limit is said: one stderr line (never stdout, so --json stays clean), none with --quiet. */
export function rateLimitNotice(ctx: ApiContext): ((line: string) => void) | undefined {
  if (ctx.globals.quiet) return undefined;
  return (line) => notice(ctx, line);
}

/**
 * Open the session from the global options: --timeout, --rate (the gate's fixed rate), --verbose, --insecure.
 * The credentials of each client it builds are added to `secrets`, the run's registry, before any request.
 */
export function openSession(ctx: ApiContext, secrets: SecretKeeper): ApiSession {
  const globals = ctx.globals;
  const timeoutMs = globals.timeout?.ms;
  const pacer = new Pacer({ fixedRate: globals.rate, clock: ctx.clock });
  // Created with the first client: a missing board or a refused base URL fails before undici loads.
  let dispatcher: Promise<Dispatcher> | undefined;
  const waitNotice = rateLimitNotice(ctx);
  // Asked for with --verbose: said under --quiet too.
  const log = globals.verbose ? (line: string) => notice(ctx, `[http] ${line}`, { always: true }) : undefined;
  const client = async (target: ApiTarget, board: Parameters<typeof apiOver>[1], cacheToken?: string): Promise<ApiClient> => {
    secrets.add(target.token);
    checkBaseUrl(target.baseUrl, globals.insecure);
    dispatcher ??= createDispatcher(timeoutMs);
    const http = createHttp({ baseUrl: target.baseUrl, token: target.token, dispatcher: await dispatcher, pacer, insecure: Boolean(globals.insecure), timeoutMs, clock: ctx.clock, log, hints: tokenHints(board), notice: waitNotice, signal: ctx.signal });
    return apiOver(http, { ...board, baseUrl: http.baseUrl }, ctx, cacheToken);
  };
  return {
    async selected() {
      const { board, token, signingKey } = resolveCredentials(ctx, await ctx.config.read());
      if (signingKey !== undefined) secrets.add(signingKey);
      return client({ baseUrl: board.baseUrl, id: board.id, token }, board, token);
    },
    client(target) {
      return client(target, { id: target.id, baseUrl: target.baseUrl, sources: { id: 'flag', baseUrl: 'flag', token: 'flag' } });
    },
    close: async () => {
      if (dispatcher) await (await dispatcher).close();
    },
  };
}
