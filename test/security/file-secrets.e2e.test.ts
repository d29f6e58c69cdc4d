// A server that echoes the token in its 400 answers must not get it written into the
// files an import leaves behind (--results, --rejects, the journal), and those files are owner-only (0600).
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realClock } from '../../src/clock.js';
import { Journal } from '../../src/import/journal.js';
import { runCli, tempDir } from '../helpers/cli.js';
import { type HostileServer, startHostileServer } from '../helpers/hostile-server.js';

// A quote and a backslash: the JSON body echoes the token escaped (`\"`), which a scrub of the raw body
// text misses and the decoded message holds as it is. The files are the last net.
const TOKEN = 'hostile"tok\\en-0123456789';
const SIGNING_KEY = 'sk-file-secret-0123456789';

let s: HostileServer;
beforeAll(async () => {
  s = await startHostileServer({ mode: 'echo-token', token: TOKEN });
});
afterAll(() => s.close());

const filesUnder = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true, recursive: true }).filter((d) => d.isFile()).map((d) => join(d.parentPath, d.name));

describe('files written by an import', () => {
  it('hold no token echoed by the server; one created is 0600, one that existed 0644 keeps its mode', async () => {
    const dir = tempDir();
    const input = join(dir, 'in.csv');
    writeFileSync(input, `Title,Status\na,Open\nb,${SIGNING_KEY}\n`);
    const results = join(dir, 'results.csv');
    const rejects = join(dir, 'rejects.csv');
    writeFileSync(results, 'old\n', { mode: 0o644 });
    const env = { CARDBOARD_BASE_URL: s.url, CARDBOARD_BOARD: s.boardId, CARDBOARD_TOKEN: s.token, CARDBOARD_SIGNING_KEY: SIGNING_KEY };
    const r = await runCli(['import', input, '--results', results, '--rejects', rejects], { env, cwd: dir });
    expect(r.code).toBe(3);
    expect(s.requests.filter((q) => q.method === 'POST').length).toBeGreaterThan(0);
    expect(r.stderr).not.toContain(s.token);
    // The server did echo it: the test would see a leak.
    expect(s.requests.some((q) => q.headers['x-token'] === TOKEN)).toBe(true);
    const written = filesUnder(dir).filter((f) => f !== input);
    expect(written).toEqual(expect.arrayContaining([results, rejects]));
    for (const f of written) {
      expect(readFileSync(f, 'utf8')).not.toContain(s.token);
      expect(readFileSync(f, 'utf8')).not.toContain(SIGNING_KEY);
    }
    expect(readFileSync(results, 'utf8')).toMatch(/rejected/);
    expect(readFileSync(rejects, 'utf8')).toMatch(/bad request for token \*\*\*/);
    expect([results, rejects].map((f) => (statSync(f).mode & 0o777).toString(8))).toEqual(['644', '600']);
  });
});

describe('NDJSON rejects and the journal', () => {
  it('an NDJSON rejects file holds no secret, in values or in the reason', async () => {
    const dir = tempDir();
    const input = join(dir, 'in.ndjson');
    writeFileSync(input, `${JSON.stringify({ Title: 'a', Status: { nested: SIGNING_KEY } })}\n`);
    const rejects = join(dir, 'rejects.ndjson');
    const env = { CARDBOARD_BASE_URL: s.url, CARDBOARD_BOARD: s.boardId, CARDBOARD_TOKEN: s.token, CARDBOARD_SIGNING_KEY: SIGNING_KEY };
    const r = await runCli(['import', input, '--rejects', rejects], { env, cwd: dir });
    expect(r.code).toBe(3);
    const text = readFileSync(rejects, 'utf8');
    expect(JSON.parse(text)).toEqual({ Title: 'a', Status: { nested: '***' }, _cardboard_reason: 'rejected: line 1: 400 bad request for token ***' });
    expect((statSync(rejects).mode & 0o777).toString(8)).toBe('600');
  });

  it('journal lines are redacted; a journal it creates is 0600, one that existed keeps its mode', async () => {
    const dir = tempDir();
    const created = join(dir, 'new.log');
    const path = join(dir, 'j.log');
    writeFileSync(path, '', { mode: 0o644 });
    const key = { sha256: 'abc', board: 'b', baseUrl: 'http://h', server: 'h:80', input: '/in.csv', plan: 'p'.repeat(64) };
    for (const file of [created, path]) {
      const j = await Journal.open(file, key, { forget: 'all', timeoutMs: 30_000, clock: realClock }, [TOKEN]);
      j.record(2, 'a'.repeat(16), 'created', `id-${TOKEN}`);
      j.close();
    }
    expect(readFileSync(path, 'utf8')).toContain('2\tcreated\tid-***');
    expect(readFileSync(path, 'utf8')).not.toContain(TOKEN);
    expect((statSync(created).mode & 0o777).toString(8)).toBe('600');
    expect((statSync(path).mode & 0o777).toString(8)).toBe('644');
  });
});
