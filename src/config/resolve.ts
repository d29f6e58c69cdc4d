import { AuthError, UsageError } from '../errors.js';
import { type CardboardConfig, type StoredBoard, storedBoard } from './store.js';

/** What resolution reads from the run (a part of the command context; config/ depends on nothing above it). */
export interface ResolveContext {
  env: Record<string, string | undefined>;
  globals: { board?: string; baseUrl?: string };
  /** Resolved secrets are added here, so everything printed hides them. */
  secrets: Set<string>;
}

/** Where a resolved part came from, coarsely: a flag, a CARDBOARD_* variable, or the config file. */
export type Source = 'flag' | 'env' | 'config';

/**
 * Exactly where a resolved part came from: the flag (`--board`), the variable (`CARDBOARD_TOKEN`), the stored
 * board (its alias), or, for the board itself, the default board (`board use`). Errors and `board show` name it.
 */
export interface Origin {
  kind: 'flag' | 'env' | 'stored' | 'default';
  /** The flag, the variable, or the alias. */
  name: string;
}

/** One resolved part: its value, the coarse source and the exact origin. */
export interface Resolved {
  value: string;
  source: Source;
  origin: Origin;
}

/** The board a command talks to, resolved by the precedence of the README's table. Never holds the token in printable form. */
export interface ResolvedBoard {
  id: string;
  baseUrl: string;
  alias?: string;
  sources: { id: Source; baseUrl: Source; token: Source };
  /** Exactly where id, base URL and token came from (hints name them); absent for explicit credentials. */
  origins?: { id: Origin; baseUrl: Origin; token: Origin };
}

/** Everything that could be resolved, each with where it came from; missing parts are undefined. Holds secrets: never print. */
export interface Selection {
  /** The stored board in use, if any. */
  alias?: string;
  id?: Resolved;
  baseUrl?: Resolved;
  token?: Resolved;
  signingKey?: Resolved;
}

const trimSlash = (url: string) => url.replace(/\/+$/, '');

/**
 * The stored board a name means: the alias, else a board stored with that id at the given base URL
 * (an id is only unique on one service; without a base URL, the first board with that id).
 */
function findStored(config: CardboardConfig, wanted: string, baseUrl?: string): [string, StoredBoard] | undefined {
  const byAlias = storedBoard(config, wanted);
  if (byAlias) return [wanted, byAlias];
  const byId = Object.entries(config.boards).filter(([, b]) => b.id === wanted);
  if (baseUrl) return byId.find(([, b]) => trimSlash(b.baseUrl) === trimSlash(baseUrl));
  return byId[0];
}

const part = (value: string, kind: Origin['kind'], name: string): Resolved => ({
  value,
  source: kind === 'flag' ? 'flag' : kind === 'env' ? 'env' : 'config',
  origin: { kind, name },
});

/** The first part that is set, in order of precedence. */
const first = (...parts: (Resolved | undefined)[]): Resolved | undefined => parts.find((p) => p !== undefined);

/**
 * Resolve the board, base URL, token and signing key (README, "Boards and credentials", the precedence table):
 * - the board: `--board`, else CARDBOARD_BOARD, else the default board (`board use`); an alias, or a board id.
 * - a stored board *named* by `--board` or CARDBOARD_BOARD uses its own base URL, token and signing key: only
 *   `--base-url` beats its URL, and the environment fills in only the signing key it lacks. A CARDBOARD_BASE_URL
 *   or CARDBOARD_TOKEN left over from another board must not redirect it.
 * - the default board is a fallback, not a choice made for this run: CARDBOARD_* variables beat its parts.
 * - an id that is no stored board (CI) takes everything from `--base-url` and the environment.
 * Never throws for missing parts (`board show` reports them).
 */
export function resolveSelection(ctx: ResolveContext, config: CardboardConfig): Selection {
  const { env, globals } = ctx;
  const picked = first(
    globals.board ? part(globals.board, 'flag', '--board') : undefined,
    env.CARDBOARD_BOARD ? part(env.CARDBOARD_BOARD, 'env', 'CARDBOARD_BOARD') : undefined,
    config.defaultBoard ? part(config.defaultBoard, 'default', config.defaultBoard) : undefined,
  );
  const urlFlag = globals.baseUrl ? part(globals.baseUrl, 'flag', '--base-url') : undefined;
  const urlEnv = env.CARDBOARD_BASE_URL ? part(env.CARDBOARD_BASE_URL, 'env', 'CARDBOARD_BASE_URL') : undefined;
  const tokenEnv = env.CARDBOARD_TOKEN ? part(env.CARDBOARD_TOKEN, 'env', 'CARDBOARD_TOKEN') : undefined;
  const keyEnv = env.CARDBOARD_SIGNING_KEY ? part(env.CARDBOARD_SIGNING_KEY, 'env', 'CARDBOARD_SIGNING_KEY') : undefined;
  const found = picked ? findStored(config, picked.value, (urlFlag ?? urlEnv)?.value) : undefined;
  if (!picked) return { alias: undefined, baseUrl: first(urlFlag, urlEnv), token: tokenEnv, signingKey: keyEnv };
  if (!found) return { alias: undefined, id: picked, baseUrl: first(urlFlag, urlEnv), token: tokenEnv, signingKey: keyEnv };

  const [alias, stored] = found;
  const id = part(stored.id, picked.origin.kind, picked.origin.name);
  const url = part(stored.baseUrl, 'stored', alias);
  const token = part(stored.token, 'stored', alias);
  const key = stored.signingKey === undefined ? undefined : part(stored.signingKey, 'stored', alias);
  // No token flag on purpose: a flag value shows in `ps` and shell history.
  if (picked.origin.kind === 'default') {
    return { alias, id, baseUrl: first(urlFlag, urlEnv, url), token: first(tokenEnv, token), signingKey: first(keyEnv, key) };
  }
  return { alias, id, baseUrl: first(urlFlag, url), token, signingKey: first(key, keyEnv) };
}

/** How an origin reads in a sentence: `--board`, `CARDBOARD_TOKEN`, `stored board "work"`, `the default board "work"`. */
export function describeOrigin(origin: Origin): string {
  switch (origin.kind) {
    case 'stored':
      return `stored board "${origin.name}"`;
    case 'default':
      return `the default board "${origin.name}"`;
    default:
      return origin.name;
  }
}

/**
 * The hint for a token the service refused (401) or did not allow (403), naming where the token came from,
 * and the base URL's source when the two came from different places (a stored token sent to another URL).
 */
export function tokenHints(board: ResolvedBoard): { 401: string; 403: string } | undefined {
  const o = board.origins;
  if (!o) return undefined;
  const fix =
    o.token.kind === 'env'
      ? `check ${o.token.name} (it must be the API Key of board ${board.id})`
      : `store the current one with \`cardboard board add ${o.token.name} --url <POST URL>\``;
  const where = `the token from ${describeOrigin(o.token)}`;
  // Both from the environment, or both from one stored board, belong together; anything else may be a mix-up.
  const together = o.baseUrl.kind === o.token.kind && (o.token.kind === 'env' || o.baseUrl.name === o.token.name);
  const mixed = together ? '' : ` The base URL came from ${describeOrigin(o.baseUrl)}: is it the right service?`;
  return {
    401: `The service refused ${where}: ${fix}.${mixed}`,
    403: `The service does not allow ${where} here: ${fix}, and check that the REST API is switched on in Card Sources.${mixed}`,
  };
}

/** The board a command talks to and its token, or a UsageError/AuthError naming what is missing. Adds the token to ctx.secrets. */
export function resolveCredentials(ctx: ResolveContext, config: CardboardConfig): { board: ResolvedBoard; token: string } {
  const sel = resolveSelection(ctx, config);
  if (!sel.id) {
    throw new UsageError('No board selected.', {
      hint: 'Pass --board <alias-or-id>, set CARDBOARD_BOARD, or store one with `cardboard board add <alias> --url <POST URL>`.',
    });
  }
  if (!sel.baseUrl) {
    throw new UsageError(`No base URL for board ${sel.id.value} (from ${describeOrigin(sel.id.origin)}): it is not a stored alias or board id.`, {
      hint: 'Pass --base-url or set CARDBOARD_BASE_URL, or store the board with `cardboard board add`.',
    });
  }
  if (!sel.token) {
    throw new AuthError(`No token for board ${sel.id.value} (from ${describeOrigin(sel.id.origin)}).`, {
      hint: 'Set CARDBOARD_TOKEN, or store the board with its token: `cardboard board add <alias> --url <POST URL> --token-stdin`.',
    });
  }
  ctx.secrets.add(sel.token.value);
  if (sel.signingKey) ctx.secrets.add(sel.signingKey.value);
  return {
    board: {
      id: sel.id.value,
      baseUrl: sel.baseUrl.value,
      alias: sel.alias,
      sources: { id: sel.id.source, baseUrl: sel.baseUrl.source, token: sel.token.source },
      origins: { id: sel.id.origin, baseUrl: sel.baseUrl.origin, token: sel.token.origin },
    },
    token: sel.token.value,
  };
}

/**
 * The webhook signing key of the selected board, resolved like the token (see resolveSelection), with its
 * source and `from`, a phrase naming it (`CARDBOARD_SIGNING_KEY`, `stored board "work"`). Added to ctx.secrets.
 */
export function resolveSigningKey(ctx: ResolveContext, config: CardboardConfig): { key: string; source: Source; origin: Origin; from: string } | undefined {
  const found = resolveSelection(ctx, config).signingKey;
  if (!found) return undefined;
  ctx.secrets.add(found.value);
  return { key: found.value, source: found.source, origin: found.origin, from: describeOrigin(found.origin) };
}

/**
 * Split a board's POST URL as copied from Card Sources (spec 2.4, 4.3), `https://host/api/aptlet/<boardId>`,
 * into the base URL and the board id. A trailing `/schema` is tolerated.
 */
export function parsePostUrl(raw: string): { baseUrl: string; id: string } {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`Invalid POST URL: ${raw}`, { hint: 'Copy it from Card Sources, e.g. https://host/api/aptlet/<board id>.' });
  }
  const m = /^(.*?)\/api\/aptlet\/([^/]+)(?:\/schema)?\/?$/.exec(url.pathname);
  if (!m) {
    throw new UsageError(`Not a board POST URL: ${url.origin}${url.pathname}`, {
      hint: 'It ends in /api/aptlet/<board id>; or pass --base-url <url> --id <board id>.',
    });
  }
  try {
    return { baseUrl: url.origin + m[1], id: decodeURIComponent(m[2]!) };
  } catch {
    // URIError: a `%` not followed by two hex digits, so the id cannot be read back.
    throw new UsageError(`The board id in the POST URL has a broken percent escape: ${m[2]}`, {
      hint: 'Copy the POST URL again from Card Sources, or pass --base-url <url> --id <board id>.',
    });
  }
}
