// CARDBOARD_MIRROR=postgres://…: the location shown without a password whatever the spelling, the client's
// settings read as libpq reads the URL and the run's environment (not the process's), and each failure to
// connect one line naming the location, with no password in it nor in its cause (what --verbose prints).
import { createServer, type Socket } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { CardboardError, UsageError } from '../../src/errors.js';
import { connectError, connectTo, isPgUrl, lostConnection, pgLocation, pgTarget } from '../../src/mirror/pg/location.js';
import { PG_REQUIRED, PG_SKIPPED, PG_SOCKET, pgSchema } from '../helpers/postgres.js';

const SECRET = 'hunter2secret';

describe('pgLocation', () => {
  it.each([
    ['postgres://me:hunter2secret@db.example:6432/cards', 'postgres://me@db.example:6432/cards'],
    ['postgresql://me:hunter2secret@db.example/cards?sslmode=require', 'postgresql://me@db.example/cards?sslmode=require'],
    ['postgres://me:hunter2@secret@db.example/cards', 'postgres://me@db.example/cards'],
    ['postgres://:hunter2secret@db.example/cards', 'postgres://db.example/cards'],
    ['postgres://me@/cards?host=/run/pg&password=hunter2secret&options=-csearch_path%3Dteam', 'postgres://me@/cards?host=/run/pg&options=-csearch_path%3Dteam'],
    ['postgres://db.example/cards?sslpassword=hunter2secret&PASSWORD=hunter2secret&pass%77ord=hunter2secret', 'postgres://db.example/cards'],
    ['postgres://me@db.example/cards', 'postgres://me@db.example/cards'],
  ])('%s is shown as %s', (url, shown) => {
    expect(pgLocation(url)).toBe(shown);
    expect(pgLocation(url)).not.toContain('secret');
  });

  it('recognises both schemes, in any case, and nothing else', () => {
    expect(['postgres://x', 'postgresql://x', 'POSTGRES://x'].map(isPgUrl)).toEqual([true, true, true]);
    expect(['./postgres.db', 'postgres:x', 'mysql://x', 'https://x'].map(isPgUrl)).toEqual([false, false, false, false]);
  });
});

describe('connectError', () => {
  const target = pgTarget(`postgres://me:${SECRET}@db.example/cards`, { PGPASSWORD: 'pgpassword-secret' });
  const fail = (message: string, code?: string) => Object.assign(new Error(message), code === undefined ? {} : { code });
  const told = (err: CardboardError) => `${err.message}\n${err.hint}\n${(err.cause as Error).message}\n${(err.cause as Error).stack}`;

  it.each([
    [fail('password authentication failed for user "me"', '28P01'), `The mirror's database at postgres://me@db.example/cards refused the login: password authentication failed for user "me".`],
    [fail('database "cards" does not exist', '3D000'), `The mirror's database at postgres://me@db.example/cards is not there: database "cards" does not exist.`],
    [fail('connect ECONNREFUSED 10.0.0.1:5432', 'ECONNREFUSED'), `Cannot reach the mirror's database at postgres://me@db.example/cards: the server refused the connection.`],
    [fail('The server does not support SSL connections'), `The mirror's database at postgres://me@db.example/cards does not accept SSL, which sslmode=require asks for.`],
    [fail('self-signed certificate', 'DEPTH_ZERO_SELF_SIGNED_CERT'), `The mirror's database at postgres://me@db.example/cards sent a certificate that was not verified (DEPTH_ZERO_SELF_SIGNED_CERT).`],
    [fail('SASL: SCRAM-SERVER-FIRST-MESSAGE: client password must be a string'), `The mirror's database at postgres://me@db.example/cards asks for a password and none was given.`],
    [fail(`odd failure mentioning ${SECRET} and pgpassword-secret`), `Cannot connect to the mirror's database at postgres://me@db.example/cards: odd failure mentioning *** and ***.`],
  ])('%s: one line naming the location, exit 1, no password in it or its cause', (err, line) => {
    const e = connectError(err, target);
    expect(e).toBeInstanceOf(CardboardError);
    expect(e.exitCode).toBe(1);
    expect(e.message).toBe(line);
    expect(told(e)).not.toMatch(/hunter2secret|pgpassword-secret/);
    expect((e.cause as { code?: string }).code).toBe((err as { code?: string }).code);
  });
});

describe('lostConnection', () => {
  const target = pgTarget(`postgres://me:${SECRET}@db.example/cards`, { PGPASSWORD: 'pgpassword-secret' });

  it.each([
    ['ECONNRESET', 'read ECONNRESET'],
    ['57P01', 'terminating connection due to administrator command'],
    ['08006', 'connection failure'],
    [undefined, 'Connection terminated unexpectedly'],
  ])('%s (%s) is a lost connection naming the location, exit 1', (code, message) => {
    const err = lostConnection(Object.assign(new Error(message), code === undefined ? {} : { code }), target);
    expect(err).toBeInstanceOf(CardboardError);
    expect((err as CardboardError).message).toBe(`The connection to the mirror's database at postgres://me@db.example/cards was lost: ${message}.`);
    expect((err as CardboardError).exitCode).toBe(1);
  });

  it("leaves any other error as it is: the user's, and a statement's (a bug)", () => {
    const usage = new UsageError('x');
    const sql = Object.assign(new Error('relation "nope" does not exist'), { code: '42P01' });
    expect(lostConnection(usage, target)).toBe(usage);
    expect(lostConnection(sql, target)).toBe(sql);
  });
});

describe('connectTo, before any connection', () => {
  it.each([
    ['postgres://me:hunter2secret@db.example/cards?sslmode=sometimes', 'sslmode=sometimes is not one of disable, allow, prefer, require, verify-ca, verify-full'],
    ['postgres://me:hunter2secret@db.example/cards?sslmode=verify-ca', 'sslmode=verify-ca needs sslrootcert=<file of the certificate authority>'],
    ['postgres://me:hunter2secret@db.example/cards?sslmode=require&sslrootcert=/nonexistent/ca.pem', '/nonexistent/ca.pem'],
  ])('%s is refused as a usage error (exit 2) naming the location', async (url, words) => {
    const err = await connectTo(pgTarget(url, {})).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UsageError);
    expect((err as Error).message).toContain('postgres://me@db.example/cards');
    expect((err as Error).message).toContain(words);
    expect(String((err as Error).message)).not.toContain(SECRET);
  });
});

/**
 * A TCP server that reads the first message of each connection (an SSLRequest or a StartupMessage, by its
 * code) and answers an SSLRequest with `N` (no SSL here), anything else by closing: what libpq's sslmode
 * does shows in the order of those messages.
 */
async function noSslServer(): Promise<{ port: number; seen: string[] }> {
  const seen: string[] = [];
  const server = createServer((socket: Socket) => {
    socket.once('data', (b: Buffer) => {
      const code = b.readInt32BE(4);
      if (code === 80877103) {
        seen.push('ssl');
        socket.write('N');
        socket.end();
      } else {
        seen.push(code === 196608 ? 'plain' : `code ${code}`);
        socket.destroy();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { port: (server.address() as { port: number }).port, seen };
}

describe("sslmode, as libpq means it, against a server that has no SSL", () => {
  it.each([
    ['prefer (the default)', '', {}, ['ssl', 'plain']],
    ['prefer from PGSSLMODE', '', { PGSSLMODE: 'prefer' }, ['ssl', 'plain']],
    ['disable', '?sslmode=disable', {}, ['plain']],
    ['disable from PGSSLMODE', '', { PGSSLMODE: 'disable' }, ['plain']],
    ['allow', '?sslmode=allow', {}, ['plain']],
    ['require', '?sslmode=require', {}, ['ssl']],
    ['verify-full', '?sslmode=verify-full', {}, ['ssl']],
  ])('%s: asks %j', async (_, query, env, asked) => {
    const { port, seen } = await noSslServer();
    const err = await connectTo(pgTarget(`postgres://me:${SECRET}@127.0.0.1:${port}/cards${query}`, env)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CardboardError);
    expect(seen).toEqual(asked);
    if (asked.length === 1 && asked[0] === 'ssl') expect((err as Error).message).toMatch(/does not accept SSL, which sslmode=(require|verify-full) asks for\.$/);
    expect((err as Error).message).not.toContain(SECRET);
  });
});

describe.skipIf(PG_SKIPPED !== undefined && !PG_REQUIRED)('connectTo, against the test server', () => {
  it('is there to run against', () => {
    expect(PG_SKIPPED, PG_SKIPPED).toBeUndefined();
  });

  it("reaches the socket directory of host=, with the URL's options (search_path) reaching the server", async () => {
    const db = await pgSchema();
    const client = await connectTo(pgTarget(db.url, {}));
    try {
      expect((await client.query('SHOW search_path')).rows[0]).toEqual({ search_path: db.schema });
      expect((await client.query('SELECT current_user AS u, current_database() AS d, application_name AS a FROM pg_stat_activity WHERE pid = pg_backend_pid()')).rows[0]).toEqual({ u: 'postgres', d: 'postgres', a: 'cardboard' });
    } finally {
      await client.end();
    }
  });

  it("reads libpq's variables from the run's environment, not the process's", async () => {
    process.env.PGDATABASE = 'no_such_database_of_the_process';
    try {
      const client = await connectTo(pgTarget('postgres://', { PGHOST: PG_SOCKET, PGUSER: 'postgres', PGDATABASE: 'postgres', PGOPTIONS: '-csearch_path=from_env', PGAPPNAME: 'run-app' }));
      try {
        expect((await client.query('SELECT current_setting($1) AS p, current_setting($2) AS a', ['search_path', 'application_name'])).rows[0]).toEqual({ p: 'from_env', a: 'run-app' });
      } finally {
        await client.end();
      }
    } finally {
      delete process.env.PGDATABASE;
    }
  });

  it('a database that is not there: one line naming it, exit 1', async () => {
    const url = `postgres://postgres:${SECRET}@/no_such_db?host=${encodeURIComponent(PG_SOCKET ?? '')}`;
    const err = await connectTo(pgTarget(url, { PGPASSWORD: 'pgpassword-secret' })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CardboardError);
    expect((err as CardboardError).message).toBe(`The mirror's database at ${pgLocation(url)} is not there: database "no_such_db" does not exist.`);
    expect(JSON.stringify({ m: (err as Error).message, c: ((err as Error).cause as Error).stack })).not.toMatch(/hunter2secret|pgpassword-secret/);
  });
});
