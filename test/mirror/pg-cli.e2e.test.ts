// The mirror on PostgreSQL through the built binary, against the emulator over real HTTP and a real server
// (CARDBOARD_TEST_PG): `mirror pull` fills it, `mirror status` names it without its password, `card list
// --mirror --where` answers as the live listing does, `query` reads it, and a server that cannot be reached is
// one line naming it (exit 1), with no password anywhere, --verbose included.
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { PG_REQUIRED, PG_SKIPPED, pgSchema } from '../helpers/postgres.js';
import { start } from '../import/helpers.js';
import { emuEnv, serverCards } from './pull-helpers.js';

const lines = (s: string) => s.trim().split('\n').filter((l) => l !== '');
const byId = (ndjson: string) => Object.fromEntries(lines(ndjson).map((l) => JSON.parse(l) as Record<string, unknown>).map((c) => [String(c._id), c]));

describe.skipIf(PG_SKIPPED !== undefined && !PG_REQUIRED)('the mirror on PostgreSQL, through the CLI', () => {
  it('is there to run against', () => {
    expect(PG_SKIPPED, PG_SKIPPED).toBeUndefined();
  });

  it('mirror pull fills it, mirror status names it, card list --mirror --where answers as the live listing', async () => {
    const emu = await start({ seedCards: 45, pageSize: 10 });
    const db = await pgSchema();
    // A password in the URL (the test server trusts every login, so any will do): it must never be shown.
    const url = db.url.replace('postgres@', 'postgres:hunter2secret@');
    const env = emuEnv(emu, url);
    const pull = await runCli(['mirror', 'pull', '--json'], { env });
    expect(pull.code, pull.stderr).toBe(0);
    const summary = JSON.parse(pull.stdout) as Record<string, unknown>;
    expect(summary).toMatchObject({ location: db.url, pull: 1, total: 45 });
    const [[count]] = (await db.rows('SELECT count(*) FROM cards')) as [[string]];
    expect(Number(count)).toBe(45);

    const status = await runCli(['mirror', 'status', '--json'], { env });
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ location: db.url, cards: 45 });

    for (const where of [['--where', 'Status=Open'], ['--where', 'Priority>2'], []]) {
      const live = await runCli(['card', 'list', '--all', '--format', 'ndjson', ...where], { env });
      const mirrored = await runCli(['card', 'list', '--mirror', '--all', '--format', 'ndjson', ...where], { env });
      expect(live.code, live.stderr).toBe(0);
      expect(mirrored.code, mirrored.stderr).toBe(0);
      expect(byId(mirrored.stdout)).toEqual(byId(live.stdout));
      expect(mirrored.stderr).toMatch(/mirror/i);
    }
    expect(byId((await runCli(['card', 'list', '--mirror', '--all', '--format', 'ndjson'], { env })).stdout)).toEqual(serverCards(emu));

    const query = await runCli(['query', 'SELECT count(*) AS n FROM cards', '--format', 'ndjson'], { env });
    expect(query.code, query.stderr).toBe(0);
    expect(JSON.parse(query.stdout)).toEqual({ n: 45 });

    for (const r of [pull, status, query]) expect(r.stdout + r.stderr).not.toContain('hunter2secret');
  });

  it('a second pull resumes from the mirror on the server: nothing new, nothing changed', async () => {
    const emu = await start({ seedCards: 12, pageSize: 5 });
    const db = await pgSchema();
    const env = emuEnv(emu, db.url);
    expect((await runCli(['mirror', 'pull'], { env })).code).toBe(0);
    const again = await runCli(['mirror', 'pull', '--json'], { env });
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ pull: 2, new: 0, changed: 0, deleted: 0, total: 12 });
  });

  it('without a mirror there yet: the same error as SQLite, naming the database (exit 1)', async () => {
    const emu = await start({ seedCards: 3 });
    const db = await pgSchema();
    const r = await runCli(['card', 'list', '--mirror'], { env: emuEnv(emu, db.url) });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`No mirror of this board at ${db.url}.`);
  });
});

describe('a PostgreSQL mirror that cannot be reached', () => {
  const cases = [
    ['a refused port', 'postgres://me:hunter2secret@127.0.0.1:1/cards', /^error: Cannot reach the mirror's database at postgres:\/\/me@127\.0\.0\.1:1\/cards: the server refused the connection\.$/m],
    ['a socket directory with no server', 'postgres://me:hunter2secret@/cards?host=/nonexistent-pg-dir&password=hunter2secret', /^error: Cannot reach the mirror's database at postgres:\/\/me@\/cards\?host=\/nonexistent-pg-dir: no server listens on the socket in \/nonexistent-pg-dir\.$/m],
  ] as const;

  it.each(cases)('%s: one line naming it, exit 1, no password anywhere, --verbose included', async (_, url, line) => {
    const emu = await start({ seedCards: 3 });
    for (const args of [['mirror', 'status'], ['mirror', 'pull', '--verbose'], ['card', 'list', '--mirror', '--verbose'], ['query', 'SELECT 1', '--verbose']]) {
      const r = await runCli(args, { env: { ...emuEnv(emu, url), PGPASSWORD: 'pgpassword-secret' } });
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(1);
      expect(r.stderr).toMatch(line);
      expect(r.stdout + r.stderr).not.toMatch(/hunter2secret|pgpassword-secret/);
      if (!args.includes('--verbose')) expect(lines(r.stderr).length, r.stderr).toBeLessThanOrEqual(2);
    }
  });

  it('another scheme is refused (exit 2) naming only the scheme', async () => {
    const emu = await start({ seedCards: 3 });
    const r = await runCli(['mirror', 'status'], { env: emuEnv(emu, 'mysql://me:hunter2secret@db/cards') });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('CARDBOARD_MIRROR=mysql://… is not supported');
    expect(r.stderr).not.toContain('hunter2secret');
  });
});
