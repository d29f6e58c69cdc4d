import { AuthError, UsageError } from '../errors.js';
import { didYouMean } from '../did-you-mean.js';
import { type CardboardConfig, type StoredBoard, storedBoard } from './store.js';

/**
 * What resolution reads from the run (a part of the command context; config/ depends on nothing above it).
 * Resolution only reads: the caller that uses a resolved secret adds it to the run's registry (redact.ts).
 */
export interface ResolveContext {
  env: Record<string, string | undefined>;
  globals: { board?: string; baseUrl?: string };
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
interface Resolved {
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
 * (an id is only unique on one service; without a base URL, the first board with that id). `idOnly`: the
 * name is a board id for sure (read from a POST URL), never an alias.
 */
function findStored(config: CardboardConfig, wanted: string, baseUrl?: string, idOnly = false): [string, StoredBoard] | undefined {
  const byAlias = idOnly ? undefined : storedBoard(config, wanted);
  if (byAlias) return [wanted, byAlias];
  const byId = Object.entries(config.boards).filter(([, b]) => b.id === wanted);
  if (baseUrl) return byId.find(([, b]) => trimSlash(b.baseUrl) === trimSlash(baseUrl));
  return byId[0];
}

/**
 * What to tell a user whose board name is no stored alias: the closest stored alias when one is near
 * (`Did you mean work?`), else `Stored boards: work, personal.`; neither when no board is stored.
 * Every place that looks up an alias says it (the board verbs, --board and CARDBOARD_BOARD).
 */
export function aliasAdvice(name: string, config: CardboardConfig): { suggestion?: string; stored?: string } {
  const known = Object.keys(config.boards);
  if (known.length === 0) return {};
  const suggestion = didYouMean(name, known);
  return suggestion === undefined ? { stored: `Stored boards: ${known.join(', ')}.` } : { suggestion };
}

const part = (value: string, kind: Origin['kind'], name: string): Resolved => ({
  value,
  source: kind === 'flag' ? 'flag' : kind === 'env' ? 'env' : 'config',
  origin: { kind, name },
});

/** The first part that is set, in order of precedence. */
const first = (...parts: (Resolved | undefined)[]): Resolved | undefined => parts.find((p) => p !== undefined);

/** A base URL as given (--base-url, CARDBOARD_BASE_URL): the URL to use, and the board its POST URL names, if it is one. */
interface GivenUrl {
  url: Resolved;
  board?: Resolved;
  /** The id segment of a POST URL that cannot be decoded: an error once this URL is the one in use. */
  broken?: string;
}

function givenUrl(raw: string, kind: 'flag' | 'env', name: string): GivenUrl {
  const post = splitGivenUrl(raw);
  if (!post) return { url: part(raw, kind, name) };
  const id = decodeId(post.segment);
  const url = part(post.baseUrl, kind, name);
  return id === undefined ? { url, broken: post.segment } : { url, board: part(id, kind, name) };
}

/**
 * Resolve the board, base URL, token and signing key (README, "Boards and credentials", the precedence table):
 * - the board: `--board`, else CARDBOARD_BOARD, else the board of the base URL in use when it is a POST URL
 *   (`https://host[/prefix]/api/aptlet/<id>`, read as base URL + board), else the default board (`board use`);
 *   an alias, or a board id (a POST URL's: an id only).
 * - a stored board *named* by `--board` or CARDBOARD_BOARD uses its own base URL, token and signing key: only
 *   `--base-url` beats its URL, and the environment fills in only the signing key it lacks. A CARDBOARD_BASE_URL
 *   or CARDBOARD_TOKEN left over from another board must not redirect it. A POST URL's board is named too.
 * - the default board is a fallback, not a choice made for this run: CARDBOARD_* variables beat its parts.
 * - an id that is no stored board (CI) takes everything from `--base-url` and the environment.
 * Never throws for missing parts (`board show` reports them); throws a UsageError when the POST URL in use
 * names another board than `--board`/CARDBOARD_BOARD, or its board id cannot be decoded.
 */
export function resolveSelection(ctx: ResolveContext, config: CardboardConfig): Selection {
  const { env, globals } = ctx;
  const urlFlag = globals.baseUrl ? givenUrl(globals.baseUrl, 'flag', '--base-url') : undefined;
  const urlEnv = env.CARDBOARD_BASE_URL ? givenUrl(env.CARDBOARD_BASE_URL, 'env', 'CARDBOARD_BASE_URL') : undefined;
  const sel = select(ctx, config, urlFlag?.url, urlEnv?.url, (urlFlag ?? urlEnv)?.board);
  // Checked on the URL in use only: a leftover CARDBOARD_BASE_URL that a named stored board ignores says nothing.
  const used = [urlFlag, urlEnv].find((u) => u !== undefined && u.url === sel.baseUrl);
  if (used?.broken !== undefined) {
    throw new UsageError(`The board id in ${used.url.origin.name} has a broken percent escape: ${used.broken}`, {
      hint: 'Copy the POST URL again from Card Sources, or give the base URL alone and the board with --board.',
    });
  }
  if (used?.board && sel.id && used.board.value !== sel.id.value) {
    // Two boards for one run: sending to either could write to the wrong board, so neither is guessed.
    const named = sel.alias && sel.alias !== sel.id.value ? `board ${sel.id.value} (stored board "${sel.alias}")` : `board ${sel.id.value}`;
    throw new UsageError(`${used.url.origin.name} is the POST URL of board ${used.board.value}, but ${describeOrigin(sel.id.origin)} names ${named}.`, {
      hint: `Give one board: drop ${describeOrigin(sel.id.origin)}, or give the base URL without /api/aptlet/<board id>.`,
    });
  }
  return sel;
}

function select(ctx: ResolveContext, config: CardboardConfig, urlFlag?: Resolved, urlEnv?: Resolved, urlBoard?: Resolved): Selection {
  const { env, globals } = ctx;
  const named = first(
    globals.board ? part(globals.board, 'flag', '--board') : undefined,
    env.CARDBOARD_BOARD ? part(env.CARDBOARD_BOARD, 'env', 'CARDBOARD_BOARD') : undefined,
  );
  const picked = first(named, urlBoard, config.defaultBoard ? part(config.defaultBoard, 'default', config.defaultBoard) : undefined);
  const tokenEnv = env.CARDBOARD_TOKEN ? part(env.CARDBOARD_TOKEN, 'env', 'CARDBOARD_TOKEN') : undefined;
  const keyEnv = env.CARDBOARD_SIGNING_KEY ? part(env.CARDBOARD_SIGNING_KEY, 'env', 'CARDBOARD_SIGNING_KEY') : undefined;
  const found = picked ? findStored(config, picked.value, first(urlFlag, urlEnv)?.value, picked === urlBoard) : undefined;
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
  const origins = board.origins;
  if (!origins) return undefined;
  const fix =
    origins.token.kind === 'env'
      ? `check ${origins.token.name} (it must be the API Key of board ${board.id})`
      : `store the current one with \`cardboard board add ${origins.token.name} --url <POST URL>\``;
  const where = `the token from ${describeOrigin(origins.token)}`;
  // Both from the environment, or both from one stored board, belong together; anything else may be a mix-up.
  const together = origins.baseUrl.kind === origins.token.kind && (origins.token.kind === 'env' || origins.baseUrl.name === origins.token.name);
  const mixed = together ? '' : ` The base URL came from ${describeOrigin(origins.baseUrl)}: is it the right service?`;
  return {
    401: `The service refused ${where}: ${fix}.${mixed}`,
    403: `The service does not allow ${where} here: ${fix}, and check that the REST API is switched on in Card Sources.${mixed}`,
  };
}

/**
 * The selected board's id and base URL, without its token (a command that reads only local state, such as the
 * board's mirror), or the UsageError resolveCredentials gives when one is missing.
 */
export function resolveBoardAddress(ctx: ResolveContext, config: CardboardConfig): { id: string; baseUrl: string; alias?: string } {
  const sel = resolveSelection(ctx, config);
  checkAddress(sel, config);
  return { id: sel.id.value, baseUrl: sel.baseUrl.value, ...(sel.alias === undefined ? {} : { alias: sel.alias }) };
}

/** That the selection has a board id and a base URL, or a UsageError naming the one missing. */
function checkAddress(sel: Selection, config: CardboardConfig): asserts sel is Selection & Required<Pick<Selection, 'id' | 'baseUrl'>> {
  if (!sel.id) {
    throw new UsageError('No board selected.', {
      hint: 'Pass --board <alias-or-id>, set CARDBOARD_BOARD, or store one with `cardboard board add <alias> --url <POST URL>`.',
    });
  }
  if (!sel.baseUrl) {
    const { suggestion, stored } = aliasAdvice(sel.id.value, config);
    throw new UsageError(`No base URL for board ${sel.id.value} (from ${describeOrigin(sel.id.origin)}): it is not a stored alias or board id.`, {
      suggestion,
      hint: `${stored ? `${stored} For a board not stored, pass` : 'Pass'} --base-url or set CARDBOARD_BASE_URL, or store the board with \`cardboard board add\`.`,
    });
  }
}

/**
 * The board a command talks to, its token and its signing key if it has one, or a UsageError/AuthError naming
 * what is missing.
 */
export function resolveCredentials(ctx: ResolveContext, config: CardboardConfig): { board: ResolvedBoard; token: string; signingKey?: string } {
  const sel = resolveSelection(ctx, config);
  checkAddress(sel, config);
  if (!sel.token) {
    throw new AuthError(`No token for board ${sel.id.value} (from ${describeOrigin(sel.id.origin)}).`, {
      hint: 'Set CARDBOARD_TOKEN, or store the board with its token: `cardboard board add <alias> --url <POST URL> --token-stdin`.',
    });
  }
  return {
    board: {
      id: sel.id.value,
      baseUrl: sel.baseUrl.value,
      alias: sel.alias,
      sources: { id: sel.id.source, baseUrl: sel.baseUrl.source, token: sel.token.source },
      origins: { id: sel.id.origin, baseUrl: sel.baseUrl.origin, token: sel.token.origin },
    },
    token: sel.token.value,
    ...(sel.signingKey ? { signingKey: sel.signingKey.value } : {}),
  };
}

/**
 * The webhook signing key of the selected board, resolved like the token (see resolveSelection), with its
 * source and `from`, a phrase naming it (`CARDBOARD_SIGNING_KEY`, `stored board "work"`).
 */
export function resolveSigningKey(ctx: ResolveContext, config: CardboardConfig): { key: string; source: Source; origin: Origin; from: string } | undefined {
  const found = resolveSelection(ctx, config).signingKey;
  if (!found) return undefined;
  return { key: found.value, source: found.source, origin: found.origin, from: describeOrigin(found.origin) };
}

/** The path of a board's POST URL (spec 2.4, 4.3): `[prefix]/api/aptlet/<board id>`, a `/schema` and a `/` after it tolerated. */
const POST_PATH = /^(.*?)\/api\/aptlet\/([^/]+)(?:\/schema)?\/?$/;

/**
 * A URL whose path is a POST URL's, split into the base URL (origin and any prefix; no user:password, query
 * or fragment) and the id segment as it stands, percent-encoded. Any other path: undefined.
 */
function splitPostUrl(url: URL): { baseUrl: string; segment: string } | undefined {
  const m = POST_PATH.exec(url.pathname);
  return m ? { baseUrl: url.origin + m[1], segment: m[2]! } : undefined;
}

/** An http(s) URL that is a POST URL, split (splitPostUrl); anything else, a URL or not: undefined. */
function splitGivenUrl(raw: string): { baseUrl: string; segment: string } | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return undefined;
  }
  // Another scheme is left whole, for checkBaseUrl to name it.
  return url.protocol === 'https:' || url.protocol === 'http:' ? splitPostUrl(url) : undefined;
}

/** The board id an id segment stands for, or undefined when a `%` is not followed by two hex digits (URIError). */
function decodeId(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
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
  const post = splitPostUrl(url);
  if (!post) {
    throw new UsageError(`Not a board POST URL: ${url.origin}${url.pathname}`, {
      hint: 'It ends in /api/aptlet/<board id>; or pass --base-url <url> --id <board id>.',
    });
  }
  const id = decodeId(post.segment);
  if (id === undefined) {
    throw new UsageError(`The board id in the POST URL has a broken percent escape: ${post.segment}`, {
      hint: 'Copy the POST URL again from Card Sources, or pass --base-url <url> --id <board id>.',
    });
  }
  return { baseUrl: post.baseUrl, id };
}

/**
 * A base URL as `--base-url` takes it: a POST URL (`https://host[/prefix]/api/aptlet/<board id>`) split into
 * the base URL and its board id; any other URL as given, with no board.
 */
export function readBaseUrl(raw: string): { baseUrl: string; id?: string } {
  return splitGivenUrl(raw) ? parsePostUrl(raw) : { baseUrl: raw };
}
