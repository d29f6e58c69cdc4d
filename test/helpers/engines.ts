// The two engines a mirror is kept in, for tests that run once on each (`describe.each(ENGINES)`): SQLite (a
// file) and PostgreSQL (a schema of the test server, test/helpers/postgres.ts). Each gives a fresh mirror's
// environment and reads the mirror with a connection of the test's own, as another program would.
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type Libsql from 'libsql';
import { it } from 'vitest';
import { tempDir } from './cli.js';
import { PG_REQUIRED, PG_SKIPPED, pgClient, pgSchema, pgUrl } from './postgres.js';

/** The environment of a fresh mirror: where it is (CARDBOARD_MIRROR) and a cache directory of its own. */
// A type, not an interface: it passes where an environment (Record<string, string>) is asked for.
export type MirrorEnv = {
  CARDBOARD_MIRROR: string;
  CARDBOARD_CACHE_DIR: string;
};

/** A mirror: its environment, or its location (CARDBOARD_MIRROR). */
export type Mirror = MirrorEnv | string;
const where = (at: Mirror) => (typeof at === 'string' ? at : at.CARDBOARD_MIRROR);

/** SQL for one engine, or a statement both take (with `?` for each parameter). */
export type EngineSql = string | { sqlite: string; postgres: string };

export interface Engine {
  name: 'sqlite' | 'postgres';
  /** Why this engine's tests cannot run here, or undefined. */
  missing: string | undefined;
  /** A fresh, empty mirror's environment; in a test (a PostgreSQL schema is dropped when the test ends). */
  env(): Promise<MirrorEnv>;
  /**
   * The rows of `sql` over the mirror `env` selects, as arrays of values, read by a connection of the test's
   * own. Booleans come back as 1 and 0, as SQLite gives them, so that one expectation fits both.
   */
  rows(at: Mirror, sql: EngineSql, params?: readonly unknown[]): Promise<unknown[][]>;
  /** Run `sql` (statements that return nothing, one or more) over the mirror, as another program would write to it. */
  exec(at: Mirror, sql: EngineSql): Promise<void>;
  /** The mirror's cards by `_id`, each its `body` as the engine keeps it for SQL, parsed. */
  cards(at: Mirror): Promise<Record<string, Record<string, unknown>>>;
  /** A fresh, empty mirror's location (CARDBOARD_MIRROR); in a test. */
  mirror(): Promise<string>;
  /** A fresh, empty mirror for a whole describe block (made in beforeAll): its location, and `drop` for afterAll. */
  lasting(): Promise<{ location: string; drop: () => Promise<void> }>;
}

const libsql = () => createRequire(import.meta.url)('libsql') as typeof Libsql;

export const SQLITE: Engine = {
  name: 'sqlite',
  missing: undefined,
  env: async () => {
    const dir = tempDir('cardboard-mirror-');
    return { CARDBOARD_MIRROR: join(dir, 'm.db'), CARDBOARD_CACHE_DIR: join(dir, 'cache') };
  },
  mirror: async () => (await SQLITE.env()).CARDBOARD_MIRROR,
  lasting: async () => ({ location: join(tempDir('cardboard-mirror-'), 'm.db'), drop: async () => undefined }),
  rows: async (at, sql, params = []) => {
    const db = new (libsql())(where(at), { timeout: 10_000 });
    try {
      return db.prepare(typeof sql === 'string' ? sql : sql.sqlite).raw(true).all(...params) as unknown[][];
    } finally {
      db.close();
    }
  },
  exec: async (at, sql) => {
    const db = new (libsql())(where(at), { timeout: 10_000 });
    try {
      db.exec(typeof sql === 'string' ? sql : sql.sqlite);
    } finally {
      db.close();
    }
  },
  cards: async (at) => Object.fromEntries((await SQLITE.rows(at, 'SELECT _id, body FROM cards')).map(([id, body]) => [String(id), JSON.parse(String(body)) as Record<string, unknown>])),
};

/** `?` placeholders as PostgreSQL's `$1`, `$2`… (the tests' statements hold no `?` in a string). */
const numbered = (sql: string) => {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
};

/** The schema a test URL selects (its `options=-csearch_path=…`). */
const schemaOf = (url: string) => {
  // Not `new URL`: a socket URL has no host before its path (postgres://postgres@/postgres?host=…).
  const options = decodeURIComponent(/[?&]options=([^&]*)/.exec(url)?.[1] ?? '');
  const schema = /-csearch_path=(\w+)/.exec(options)?.[1];
  if (schema === undefined) throw new Error(`no search_path in the test mirror's URL: ${url}`);
  return schema;
};

export const POSTGRES: Engine = {
  name: 'postgres',
  missing: PG_SKIPPED,
  env: async () => {
    const { url } = await pgSchema();
    return { CARDBOARD_MIRROR: url, CARDBOARD_CACHE_DIR: join(tempDir('cardboard-mirror-'), 'cache') };
  },
  mirror: async () => (await pgSchema()).url,
  lasting: async () => {
    const schema = `t_${randomBytes(6).toString('hex')}`;
    const sql = async (text: string) => {
      const client = await pgClient();
      try {
        await client.query(text);
      } finally {
        await client.end();
      }
    };
    await sql(`CREATE SCHEMA ${schema}`);
    return { location: pgUrl(schema), drop: () => sql(`DROP SCHEMA IF EXISTS ${schema} CASCADE`) };
  },
  rows: async (at, sql, params = []) => {
    const client = await pgClient();
    try {
      await client.query(`SET search_path = ${schemaOf(where(at))}`);
      const text = typeof sql === 'string' ? numbered(sql) : sql.postgres;
      const { rows } = await client.query({ text, values: params as unknown[], rowMode: 'array' });
      return (rows as unknown[][]).map((row) => row.map((v) => (typeof v === 'boolean' ? Number(v) : v)));
    } finally {
      await client.end();
    }
  },
  exec: async (at, sql) => {
    const client = await pgClient();
    try {
      await client.query(`SET search_path = ${schemaOf(where(at))}`);
      await client.query(typeof sql === 'string' ? sql : sql.postgres);
    } finally {
      await client.end();
    }
  },
  cards: async (at) => Object.fromEntries((await POSTGRES.rows(at, 'SELECT _id, body FROM cards')).map(([id, body]) => [String(id), body as Record<string, unknown>])),
};

/** Both engines, for `describe.each(ENGINES)('… ($name)', (engine) => { if (absent(engine)) return; … })`. */
export const ENGINES: readonly Engine[] = [SQLITE, POSTGRES];

/**
 * Whether `engine` cannot run here; if so, registers what stands for its tests in the describe block: a test
 * skipped with the reason, or, where the server is required (CI), a test that fails with it.
 */
export function absent(engine: Engine): boolean {
  if (engine.missing === undefined) return false;
  const reason = engine.missing;
  if (PG_REQUIRED) {
    it(`has a ${engine.name} server`, () => {
      throw new Error(reason);
    });
  } else {
    it.skip(reason, () => undefined);
  }
  return true;
}
