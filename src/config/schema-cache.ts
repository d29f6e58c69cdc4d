import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Field } from '../spec-types.js';
import { fileError } from '../fs-errors.js';
import { cacheDir, ensurePrivateDir } from './store.js';

/** How long a cached schema is trusted: short, since fields can be added on the board (spec 4.3 rule 2). */
export const SCHEMA_TTL_MS = 5 * 60_000;

interface CachedSchema {
  baseUrl: string;
  board: string;
  /** Which token fetched it (see tokenTag): another token asks the server, so a wrong one gets its 401. */
  tokenTag: string;
  fetchedAt: number;
  fields: Field[];
}

/**
 * A tag of the token that fetched a cached schema: 16 hex digits of a salted sha256, never the token.
 * A cache hit must not answer for a token the server would refuse (a rotated or mistyped one).
 */
export function tokenTag(token: string): string {
  return createHash('sha256').update(`cardboard schema cache\n${token}`).digest('hex').slice(0, 16);
}

/** `<cache dir>/schema-<hash of baseUrl + board>.json` (see cacheDir): per board, and never holding the token. */
export function schemaCachePath(env: Record<string, string | undefined>, baseUrl: string, board: string): string {
  const hash = createHash('sha256').update(`${baseUrl}\n${board}`).digest('hex').slice(0, 20);
  return join(cacheDir(env), `schema-${hash}.json`);
}

/** The cached fields if fresh (younger than the TTL, same board, base URL and token), else undefined. */
export function readSchemaCache(env: Record<string, string | undefined>, baseUrl: string, board: string, token: string, nowMs: number): Field[] | undefined {
  try {
    const cached = JSON.parse(readFileSync(schemaCachePath(env, baseUrl, board), 'utf8')) as CachedSchema;
    const fresh = nowMs - cached.fetchedAt >= 0 && nowMs - cached.fetchedAt < SCHEMA_TTL_MS;
    const same = cached.baseUrl === baseUrl && cached.board === board && cached.tokenTag === tokenTag(token);
    if (fresh && same && Array.isArray(cached.fields)) return cached.fields;
  } catch {
    // Missing or unreadable: fetch instead.
  }
  return undefined;
}

/**
 * Store the fields. File 0600 in a 0700 directory made on first write: a schema is no secret, but a private
 * board's field names are its owner's business, like `gh`'s cache. Best effort: the cache only saves a
 * request, so a failure (read-only home, a file in the way) returns a one-line reason instead of throwing.
 */
export function writeSchemaCache(env: Record<string, string | undefined>, baseUrl: string, board: string, token: string, fields: Field[], nowMs: number): string | undefined {
  const file = schemaCachePath(env, baseUrl, board);
  try {
    ensurePrivateDir(cacheDir(env));
    const data: CachedSchema = { baseUrl, board, tokenTag: tokenTag(token), fetchedAt: nowMs, fields };
    writeFileSync(file, JSON.stringify(data), { mode: 0o600 });
    return undefined;
  } catch (err) {
    const shown = fileError(err, { action: 'write the schema cache', path: file, hint: '' });
    const why = shown instanceof Error ? shown.message.replace(/\.$/, '') : `Cannot write the schema cache ${file}: ${String(err)}`;
    return `${why}; the schema is not cached (CARDBOARD_CACHE_DIR moves the cache).`;
  }
}
