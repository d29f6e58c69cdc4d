import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Field } from '../spec-types.js';
import { fileError } from '../fs-errors.js';
import { makePrivateDir, writePrivateFile } from '../private-file.js';
import { cacheDir } from './store.js';

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
function tokenTag(token: string): string {
  return createHash('sha256').update(`cardboard schema cache\n${token}`).digest('hex').slice(0, 16);
}

/** `<cache dir>/schema-<hash of baseUrl + board>.json` (see cacheDir): per board, and never holding the token. */
export function schemaCachePath(env: Record<string, string | undefined>, baseUrl: string, board: string): string {
  const hash = createHash('sha256').update(`${baseUrl}\n${board}`).digest('hex').slice(0, 20);
  return join(cacheDir(env), `schema-${hash}.json`);
}

/**
 * The cache file of a board as it was written, or undefined when there is none or it is not one (unreadable,
 * not JSON, of another board, without a list of fields). The one reader of the file's format.
 */
function readCacheFile(env: Record<string, string | undefined>, baseUrl: string, board: string): CachedSchema | undefined {
  try {
    const cached = JSON.parse(readFileSync(schemaCachePath(env, baseUrl, board), 'utf8')) as Partial<CachedSchema> | null;
    if (cached?.baseUrl !== baseUrl || cached.board !== board || !Array.isArray(cached.fields)) return undefined;
    return cached as CachedSchema;
  } catch {
    return undefined;
  }
}

/** The cached fields if fresh (younger than the TTL, same board, base URL and token), else undefined: fetch instead. */
export function readSchemaCache(env: Record<string, string | undefined>, baseUrl: string, board: string, token: string, nowMs: number): Field[] | undefined {
  const cached = readCacheFile(env, baseUrl, board);
  if (cached === undefined) return undefined;
  const age = nowMs - cached.fetchedAt;
  return age >= 0 && age < SCHEMA_TTL_MS && cached.tokenTag === tokenTag(token) ? cached.fields : undefined;
}

/**
 * The names of the cached fields of a board, stale or not and whichever token fetched them, for completion
 * (which must answer at once, offline, and never shows a value). Empty when nothing is cached.
 */
export function cachedFieldNames(env: Record<string, string | undefined>, baseUrl: string, board: string): string[] {
  // The file's fields are as they were read: each is checked to be a field with a name.
  const fields: unknown[] = readCacheFile(env, baseUrl, board)?.fields ?? [];
  return fields.flatMap((f) => {
    const name = (f as { name?: unknown } | null)?.name;
    return typeof name === 'string' ? [name] : [];
  });
}

/**
 * Store the fields, owner-only (private-file.ts) in an owner-only directory made on first write: a schema is no
 * secret, but a private board's field names are its owner's business, like `gh`'s cache. Best effort: the
 * cache only saves a request, so a failure (read-only home, a file in the way) returns a one-line reason
 * instead of throwing.
 */
export function writeSchemaCache(env: Record<string, string | undefined>, baseUrl: string, board: string, token: string, fields: Field[], nowMs: number): string | undefined {
  const file = schemaCachePath(env, baseUrl, board);
  try {
    makePrivateDir(cacheDir(env));
    const data: CachedSchema = { baseUrl, board, tokenTag: tokenTag(token), fetchedAt: nowMs, fields };
    writePrivateFile(file, JSON.stringify(data), { flag: 'the schema cache' });
    return undefined;
  } catch (err) {
    const shown = fileError(err, { action: 'write the schema cache', path: file, hint: '' });
    const why = shown instanceof Error ? shown.message.replace(/\.$/, '') : `Cannot write the schema cache ${file}: ${String(err)}`;
    return `${why}; the schema is not cached (CARDBOARD_CACHE_DIR moves the cache).`;
  }
}
