// What ctx.api() builds on first use: one keep-alive dispatcher and one rate gate for the whole run, and
// the clients over them. Built lazily so that commands that make no request never load undici.
import type { Dispatcher } from 'undici';
import { resolveCredentials, tokenHints } from '../config/resolve.js';
import { terminalText } from '../io/text.js';
import { redactSecrets } from '../redact.js';
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
  return (line) => ctx.stderr.write(`${terminalText(redactSecrets(ctx.secrets, line))}\n`);
}

/** Open the session from the global options: --timeout, --rate (the gate's fixed rate), --verbose, --insecure. */
export function openSession(ctx: ApiContext): ApiSession {
  const g = ctx.globals;
  const timeoutMs = g.timeout?.ms;
  const pacer = new Pacer({ fixedRate: g.rate, clock: ctx.clock });
  // Created with the first client: a missing board or a refused base URL fails before undici loads.
  let dispatcher: Promise<Dispatcher> | undefined;
  const notice = rateLimitNotice(ctx);
  const log = g.verbose ? (line: string) => ctx.stderr.write(`${terminalText(redactSecrets(ctx.secrets, `[http] ${line}`))}\n`) : undefined;
  const client = async (target: ApiTarget, board: Parameters<typeof apiOver>[1], cacheToken?: string): Promise<ApiClient> => {
    ctx.secrets.add(target.token);
    checkBaseUrl(target.baseUrl, g.insecure);
    dispatcher ??= createDispatcher(timeoutMs);
    const http = createHttp({ baseUrl: target.baseUrl, token: target.token, dispatcher: await dispatcher, pacer, insecure: Boolean(g.insecure), timeoutMs, clock: ctx.clock, log, hints: tokenHints(board), notice, signal: ctx.signal });
    return apiOver(http, { ...board, baseUrl: http.baseUrl }, ctx, cacheToken);
  };
  return {
    async selected() {
      const { board, token } = resolveCredentials(ctx, await ctx.config.read());
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
