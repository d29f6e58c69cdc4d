// A mirror on PostgreSQL used by a role the server refuses a right (SQLSTATE 42501), or whose tables were
// dropped under a run (42P01): one line naming the mirror, the role and what it lacks, and a hint; exit 1,
// never "a bug in cardboard". Real roles on the test server (any role logs in there without a password),
// each made for one test and dropped after it.
import { randomBytes } from 'node:crypto';
import { describe, expect, it, onTestFinished } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { SIGNING_KEY } from '../helpers/emulator.js';
import { PG_REQUIRED, PG_SKIPPED, pgClient, type PgSchema, pgSchema } from '../helpers/postgres.js';
import { start } from '../import/helpers.js';
import { waitFor } from '../helpers/wait.js';
import { emuEnv } from './pull-helpers.js';

/** SQL as the server's superuser. */
async function admin(sql: string): Promise<void> {
  const c = await pgClient();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

/** A new login role given `grants` (each `{schema}` the test's schema), dropped when the test ends; the mirror's URL as that role. */
async function roleWith(db: PgSchema, grants: string[]): Promise<{ role: string; url: string }> {
  const role = `r_${randomBytes(5).toString('hex')}`;
  await admin(`CREATE ROLE ${role} LOGIN`);
  onTestFinished(() => admin(`DROP OWNED BY ${role}; DROP ROLE ${role}`));
  for (const grant of grants) await admin(grant.replaceAll('{schema}', db.schema).replaceAll('{role}', role));
  return { role, url: db.url.replace('postgres@', `${role}@`) };
}

const READER = ['GRANT USAGE ON SCHEMA {schema} TO {role}', 'GRANT SELECT ON ALL TABLES IN SCHEMA {schema} TO {role}'];

/** The two lines of a refusal: the error and its hint. */
function refusal(stderr: string): { error: string; hint: string } {
  const lines = stderr.trim().split('\n');
  expect(lines, stderr).toHaveLength(2);
  expect(stderr).not.toMatch(/bug/i);
  return { error: lines[0]!, hint: lines[1]! };
}

describe.skipIf(PG_SKIPPED !== undefined && !PG_REQUIRED)('a mirror on PostgreSQL refused to the role', () => {
  it('mirror pull by a role that may only read: the missing rights named, exit 1, the mirror unchanged', async () => {
    const emu = await start({ seedCards: 12, pageSize: 5 });
    const db = await pgSchema();
    expect((await runCli(['mirror', 'pull'], { env: emuEnv(emu, db.url) })).code).toBe(0);
    const { role, url } = await roleWith(db, READER);

    const r = await runCli(['mirror', 'pull'], { env: emuEnv(emu, url) });
    expect(r.code, r.stderr).toBe(1);
    const { error, hint } = refusal(r.stderr);
    expect(error).toMatch(new RegExp(`^error: The mirror at ${url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} refused the role "${role}" \\(permission denied for table \\w+\\): it needs SELECT, INSERT, UPDATE and DELETE on the mirror's tables\\.$`));
    expect(hint).toMatch(/^hint: .*listener's role.*docs\/mirror\.md, "The database and its roles"/);
    expect(await db.rows('SELECT count(*)::int FROM pulls')).toEqual([[1]]);

    // Reading is what it may do.
    const status = await runCli(['mirror', 'status', '--json'], { env: emuEnv(emu, url) });
    expect(status.code, status.stderr).toBe(0);
  });

  it('webhook listen --mirror by a role that may only read: refused at start, before listening, exit 1', async () => {
    const emu = await start({ seedCards: 3 });
    const db = await pgSchema();
    expect((await runCli(['mirror', 'pull'], { env: emuEnv(emu, db.url) })).code).toBe(0);
    const { role, url } = await roleWith(db, READER);
    const r = await runCli(['webhook', 'listen', '--port', '0', '--mirror'], { env: { ...emuEnv(emu, url), CARDBOARD_SIGNING_KEY: SIGNING_KEY } });
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).not.toMatch(/Listening on|bug|file and its folder/i);
    expect(r.stderr).toContain(`error: The mirror at ${url} refused the role "${role}" (permission denied for table listener): it needs SELECT, INSERT, UPDATE and DELETE on the mirror's tables.`);
  });

  it('card list --mirror and query by a role without SELECT: SELECT named, exit 1', async () => {
    const emu = await start({ seedCards: 3 });
    const db = await pgSchema();
    expect((await runCli(['mirror', 'pull'], { env: emuEnv(emu, db.url) })).code).toBe(0);
    // May read the tables that say which boards are there, not the cards.
    const { role, url } = await roleWith(db, [...READER, 'REVOKE SELECT ON {schema}.cards FROM {role}']);
    const list = await runCli(['card', 'list', '--mirror'], { env: emuEnv(emu, url) });
    expect(list.code, list.stderr).toBe(1);
    expect(refusal(list.stderr).error).toBe(`error: The mirror at ${url} refused the role "${role}" (permission denied for table cards): it needs SELECT on the mirror's tables.`);
    const query = await runCli(['query', 'SELECT count(*) FROM cards'], { env: emuEnv(emu, url) });
    expect(query.code, query.stderr).toBe(1);
    expect(refusal(query.stderr).error).toBe(`error: The mirror at ${url} refused the role "${role}" (permission denied for table cards): it needs SELECT on the mirror's tables.`);
  });

  it("the first pull by a role without CREATE on the schema: CREATE named, nothing made", async () => {
    const emu = await start({ seedCards: 3 });
    const db = await pgSchema();
    const { role, url } = await roleWith(db, ['GRANT USAGE ON SCHEMA {schema} TO {role}']);
    const r = await runCli(['mirror', 'pull'], { env: emuEnv(emu, url) });
    expect(r.code, r.stderr).toBe(1);
    const { error, hint } = refusal(r.stderr);
    expect(error).toBe(`error: The mirror at ${url} refused the role "${role}" (permission denied for schema ${db.schema}): it needs CREATE on the schema ${db.schema} (to make the mirror's tables).`);
    expect(hint).toMatch(/^hint: Run the first `mirror pull`/);
    expect(await db.rows("SELECT count(*)::int FROM pg_class WHERE relnamespace = to_regnamespace(current_schema())")).toEqual([[0]]);
  });

  it("the mirror's tables dropped while a pull walks the pages: said so, exit 1", async () => {
    const emu = await start({ seedCards: 30, pageSize: 5, faults: 'delay:400ms' });
    const db = await pgSchema();
    const pull = runCli(['mirror', 'pull'], { env: emuEnv(emu, db.url) });
    const saved = async () => ((await db.rows("SELECT to_regclass('cards') IS NOT NULL")) as [[boolean]])[0][0] && (await db.rows('SELECT 1 FROM cards LIMIT 1')).length > 0;
    await waitFor(saved, { what: 'the first page saved', intervalMs: 50 });
    await admin(`DROP TABLE ${['cards', 'fields', 'pulls', 'deliveries', 'tombstones', 'listener', 'boards', 'cardboard_mirror'].map((t) => `${db.schema}.${t}`).join(', ')} CASCADE`);
    const r = await pull;
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).not.toMatch(/bug/i);
    expect(r.stderr).toMatch(new RegExp(`^error: The mirror's tables at ${db.url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} are gone \\(relation "\\w+" does not exist\\): they were dropped while this run used them\\.$`, 'm'));
    expect(r.stderr).toMatch(/^hint: `cardboard mirror pull` makes the mirror again/m);
  });
});
