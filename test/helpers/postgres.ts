// A PostgreSQL server for the tests of the mirror on PostgreSQL: the one CARDBOARD_TEST_PG names (the directory of
// its Unix socket, where a `postgres` role connects without a password), or none. Without one, the tests that
// need it skip with the reason, unless CARDBOARD_REQUIRE_POSTGRES=1 (CI), where a missing server fails.
// Each test gets a schema of its own in the database `postgres`, dropped when it ends: tests in parallel, and
// two copies of the suite on one server, never see each other's tables.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { onTestFinished } from 'vitest';

/** The socket directory of the test server, when there is one. */
export const PG_SOCKET = process.env.CARDBOARD_TEST_PG || undefined;

/** Whether a missing server is a failure (CI) rather than a reason to skip. */
export const PG_REQUIRED = process.env.CARDBOARD_REQUIRE_POSTGRES === '1';

/** Why the PostgreSQL tests skip here, or undefined when they run. */
export const PG_SKIPPED =
  PG_SOCKET === undefined ? 'PostgreSQL tests skipped: no server (set CARDBOARD_TEST_PG to the socket directory of one; apt-get install postgresql; CARDBOARD_REQUIRE_POSTGRES=1 makes this a failure)' : undefined;

/** A connection string to the test server with `schema` first on the search path. */
export function pgUrl(schema: string): string {
  if (PG_SOCKET === undefined) throw new Error(PG_SKIPPED);
  return `postgres://postgres@/postgres?host=${encodeURIComponent(PG_SOCKET)}&options=${encodeURIComponent(`-csearch_path=${schema}`)}`;
}

/** A client of the test server, as another program would connect (not cardboard's). */
export async function pgClient(): Promise<pg.Client> {
  if (PG_SOCKET === undefined) throw new Error(PG_SKIPPED);
  const client = new pg.Client({ host: PG_SOCKET, user: 'postgres', database: 'postgres' });
  // int8 as a number: counts and sequence numbers in tests stay below 2^53.
  client.setTypeParser(20, Number);
  await client.connect();
  return client;
}

/** A fresh schema of the test server for one test: its name, a URL selecting it, and SQL run in it (rows as arrays). */
export interface PgSchema {
  schema: string;
  url: string;
  /** The rows of `sql`, run with the schema on the search path, as arrays of values. */
  rows(sql: string, params?: unknown[]): Promise<unknown[][]>;
}

/** A new empty schema, dropped (with everything in it) when the test ends. */
export async function pgSchema(): Promise<PgSchema> {
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const admin = await pgClient();
  try {
    await admin.query(`CREATE SCHEMA ${schema}`);
  } finally {
    await admin.end();
  }
  onTestFinished(async () => {
    const c = await pgClient();
    try {
      await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    } finally {
      await c.end();
    }
  });
  const rows = async (sql: string, params: unknown[] = []) => {
    const c = await pgClient();
    try {
      await c.query(`SET search_path = ${schema}`);
      return (await c.query({ text: sql, values: params, rowMode: 'array' })).rows as unknown[][];
    } finally {
      await c.end();
    }
  };
  return { schema, url: pgUrl(schema), rows };
}
