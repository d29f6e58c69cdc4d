import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Field } from '../spec-types.js';
import { configDir, ensurePrivateDir } from './store.js';

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

/** `<configdir>/cache/schema-<hash of baseUrl + board>.json`: per board, and never holding the token. */
export function schemaCachePath(env: Record<string, string | undefined>, baseUrl: string, board: string): string {
  const hash = createHash('sha256').update(`${baseUrl}\n${board}`).digest('hex').slice(0, 20);
  return join(configDir(env), 'cache', `schema-${hash}.json`);
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

/** Store the fields (file 0600, directory 0700). Best effort: a read-only home must not fail the command. */
export function writeSchemaCache(env: Record<string, string | undefined>, baseUrl: string, board: string, token: string, fields: Field[], nowMs: number): void {
  const file = schemaCachePath(env, baseUrl, board);
  try {
    ensurePrivateDir(configDir(env));
    ensurePrivateDir(join(configDir(env), 'cache'));
    const data: CachedSchema = { baseUrl, board, tokenTag: tokenTag(token), fetchedAt: nowMs, fields };
    writeFileSync(file, JSON.stringify(data), { mode: 0o600 });
  } catch {
    // The cache only saves a request.
  }
}
