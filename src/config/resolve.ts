import { AuthError, UsageError } from '../errors.js';
import { type CardboardConfig, readConfig, type StoredBoard, storedBoard } from './store.js';

/** What resolution reads from the run (a part of the command context; config/ depends on nothing above it). */
export interface ResolveContext {
  env: Record<string, string | undefined>;
  globals: { board?: string; baseUrl?: string };
  /** Resolved secrets are added here, so everything printed hides them. */
  secrets: Set<string>;
}

/** Where each resolved credential came from (shown by `board show`). */
export type Source = 'flag' | 'env' | 'config';

/** The board a command talks to, resolved from flags > env > config. Never holds the token in printable form. */
export interface ResolvedBoard {
  id: string;
  baseUrl: string;
  alias?: string;
  sources: { id: Source; baseUrl: Source; token: Source };
}

/** Everything that could be resolved, each with where it came from; missing parts are undefined. Holds secrets: never print. */
export interface Selection {
  alias?: string;
  id?: { value: string; source: Source };
  baseUrl?: { value: string; source: Source };
  token?: { value: string; source: Source };
  signingKey?: { value: string; source: Source };
}

const trimSlash = (url: string) => url.replace(/\/+$/, '');

function findStored(config: CardboardConfig, wanted: string, baseUrl?: string): [string, StoredBoard] | undefined {
  const byAlias = storedBoard(config, wanted);
  if (byAlias) return [wanted, byAlias];
  const byId = Object.entries(config.boards).filter(([, b]) => b.id === wanted);
  if (baseUrl) return byId.find(([, b]) => trimSlash(b.baseUrl) === trimSlash(baseUrl)) ?? byId[0];
  return byId[0];
}

/**
 * Resolve the board, base URL, token and signing key with precedence flags > CARDBOARD_* env >
 * config (issue 3 §2). `--board`/CARDBOARD_BOARD take an alias or an id; an id with no stored
 * board gets its base URL and token from flags/env alone, so a CI job needs no config file.
 * Never throws for missing parts (`board show` reports them).
 */
export function resolveSelection(ctx: ResolveContext, config: CardboardConfig = readConfig(ctx.env)): Selection {
  const { env, globals } = ctx;
  const picked: { value: string; source: Source } | undefined = globals.board
    ? { value: globals.board, source: 'flag' }
    : env.CARDBOARD_BOARD
      ? { value: env.CARDBOARD_BOARD, source: 'env' }
      : config.defaultBoard
        ? { value: config.defaultBoard, source: 'config' }
        : undefined;
  const explicitUrl = globals.baseUrl
    ? { value: globals.baseUrl, source: 'flag' as Source }
    : env.CARDBOARD_BASE_URL
      ? { value: env.CARDBOARD_BASE_URL, source: 'env' as Source }
      : undefined;
  const found = picked ? findStored(config, picked.value, explicitUrl?.value) : undefined;
  const [alias, stored] = found ?? [];
  const sel: Selection = { alias };
  if (picked) sel.id = { value: stored?.id ?? picked.value, source: picked.source };
  sel.baseUrl = explicitUrl ?? (stored ? { value: stored.baseUrl, source: 'config' } : undefined);
  // No token flag on purpose: a flag value shows in `ps` and shell history (issue 3 §2).
  if (env.CARDBOARD_TOKEN) sel.token = { value: env.CARDBOARD_TOKEN, source: 'env' };
  else if (stored) sel.token = { value: stored.token, source: 'config' };
  if (env.CARDBOARD_SIGNING_KEY) sel.signingKey = { value: env.CARDBOARD_SIGNING_KEY, source: 'env' };
  else if (stored?.signingKey) sel.signingKey = { value: stored.signingKey, source: 'config' };
  return sel;
}

/** The board a command talks to and its token, or a UsageError/AuthError naming what is missing. Adds the token to ctx.secrets. */
export function resolveCredentials(ctx: ResolveContext, config?: CardboardConfig): { board: ResolvedBoard; token: string } {
  const sel = resolveSelection(ctx, config);
  if (!sel.id) {
    throw new UsageError('No board selected.', {
      hint: 'Pass --board <alias-or-id>, set CARDBOARD_BOARD, or store one with `cardboard board add <alias> --url <POST URL>`.',
    });
  }
  if (!sel.baseUrl) {
    throw new UsageError(`No base URL for board ${sel.id.value}: it is not a stored alias or board id.`, {
      hint: 'Pass --base-url or set CARDBOARD_BASE_URL, or store the board with `cardboard board add`.',
    });
  }
  if (!sel.token) {
    throw new AuthError(`No token for board ${sel.alias ?? sel.id.value}.`, {
      hint: 'Set CARDBOARD_TOKEN, or store the token with `cardboard board add <alias> --url <POST URL> --token-stdin`.',
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
    },
    token: sel.token.value,
  };
}

/** The webhook signing key: CARDBOARD_SIGNING_KEY, else the selected board's stored key (spec 6). Added to ctx.secrets. */
export async function resolveSigningKey(ctx: ResolveContext): Promise<{ key: string; source: Source } | undefined> {
  const found = resolveSelection(ctx).signingKey;
  if (!found) return undefined;
  ctx.secrets.add(found.value);
  return { key: found.value, source: found.source };
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
