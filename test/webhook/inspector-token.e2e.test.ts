// The inspector's token kept beside the record file: the same URL after a restart with the same --record,
// owner-only, a file that is not listen's refused; and the HTML page a URL without its token gets.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { CardboardError } from '../../src/errors.js';
import { keepToken, readKeptToken, tokenFilePath } from '../../src/webhook/inspector/token-file.js';
import { runCli, tempDir } from '../helpers/cli.js';
import { inspectingListener, post, type RunningListener } from './helpers.js';
import { CSP } from './inspector-helpers.js';

const KEY = 'sk-inspect-token-0123';
const TOKEN = 'AbCdEfGhIjKlMnOpQrStUvWxYz012345';
let cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
});

const listen = (args: string[]): Promise<RunningListener & { page: string }> => inspectingListener(args, KEY, cleanup);

const mode = (path: string) => statSync(path).mode & 0o777;

describe('the token file', () => {
  it('is created owner-only whatever the umask, read back, and rewritten in place when the port changes', () => {
    const file = tokenFilePath(join(tempDir(), 'hooks.jsonl'));
    expect(file.endsWith('hooks.jsonl.inspector')).toBe(true);
    expect(readKeptToken(file)).toBeUndefined();
    const umask = process.umask(0o000);
    try {
      keepToken(file, { token: TOKEN, port: 4041 }, false);
    } finally {
      process.umask(umask);
    }
    expect(mode(file)).toBe(0o600);
    expect(readKeptToken(file)).toEqual({ token: TOKEN, port: 4041 });
    keepToken(file, { token: TOKEN, port: 4042 }, true);
    expect(readKeptToken(file)).toEqual({ token: TOKEN, port: 4042 });
    expect(mode(file)).toBe(0o600);
    // Something put there after it was read is not overwritten by a create.
    expect(() => keepToken(file, { token: TOKEN, port: 4043 }, false)).toThrow(/cannot keep the inspector's token in .*EEXIST/);
  });

  it('refuses, naming it, a file that listen did not write or that others can read', () => {
    const dir = tempDir();
    const cases: Array<[string, (path: string) => void, RegExp]> = [
      ['not JSON', (p) => writeFileSync(p, 'my notes\n', { mode: 0o600 }), /it is not JSON/],
      ['another shape', (p) => writeFileSync(p, '{"token":"short","port":1}', { mode: 0o600 }), /does not hold \{"token", "port"\}/],
      ['a port out of range', (p) => writeFileSync(p, JSON.stringify({ token: TOKEN, port: 70000 }), { mode: 0o600 }), /does not hold/],
      ['readable by others', (p) => {
        writeFileSync(p, JSON.stringify({ token: TOKEN, port: 4040 }));
        chmodSync(p, 0o644);
      }, /others can read or write it/],
      ['a symlink', (p) => {
        writeFileSync(`${p}.target`, JSON.stringify({ token: TOKEN, port: 4040 }), { mode: 0o600 });
        symlinkSync(`${p}.target`, p);
      }, /it is a symbolic link/],
      ['a directory', (p) => mkdirSync(p), /not a regular file/],
      ['a FIFO', (p) => execFileSync('mkfifo', ['-m', '600', p]), /not a regular file/],
      // Never read whole: a file of gigabytes would take the memory of the run.
      ['a large file', (p) => writeFileSync(p, JSON.stringify({ token: TOKEN, port: 4040 }) + ' '.repeat(5000), { mode: 0o600 }), /it is 5\d{3} bytes, not the few that listen writes/],
    ];
    for (const [what, make, message] of cases) {
      const file = join(dir, `${what.replace(/ /g, '-')}.inspector`);
      make(file);
      const before = statSync(file, { throwIfNoEntry: false });
      let error: unknown;
      try {
        readKeptToken(file);
      } catch (err) {
        error = err;
      }
      expect(error, what).toBeInstanceOf(CardboardError);
      expect((error as Error).message, what).toMatch(new RegExp(`^cannot use ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} for the inspector's token: `));
      expect((error as Error).message, what).toMatch(message);
      expect((error as CardboardError).hint).toContain('remove it');
      expect(statSync(file, { throwIfNoEntry: false })?.mtimeMs).toBe(before?.mtimeMs);
    }
  });
});

describe('webhook listen --inspect --record: a page that survives a restart', () => {
  it('keeps the token (and port) in <record>.inspector, 0600: the next run with the same --record serves the same URL', async () => {
    const dir = tempDir();
    const record = join(dir, 'hooks.jsonl');
    const first = await listen(['--record', record, '--inspect', '0', '--quiet']);
    expect(first.stderr()).toContain(`kept in ${record}.inspector: the same URL works after a restart with this --record`);
    expect(await post(first.url, '{"_id":"c1","Status":"Open"}', KEY)).toBe(200);
    const token = new URL(first.page).pathname.split('/')[1]!;
    expect(mode(`${record}.inspector`)).toBe(0o600);
    expect(JSON.parse(readFileSync(`${record}.inspector`, 'utf8'))).toEqual({ token, port: Number(new URL(first.page).port) });
    expect((await first.stop('SIGTERM')).signal).toBe('SIGTERM');

    // Without a port the kept one is tried first.
    const second = await listen(['--record', record, '--inspect', '--quiet']);
    expect(second.page).toBe(first.page);
    const res = await request(`${second.page}api/deliveries`);
    expect(res.statusCode).toBe(200);
    expect(((await res.body.json()) as { deliveries: Array<{ seq: number }> }).deliveries.map((d) => d.seq)).toEqual([1]);
    expect((await second.stop('SIGTERM')).signal).toBe('SIGTERM');
    expect(readFileSync(record, 'utf8')).not.toContain(token);
  });

  it('starts when the kept port is taken by another process, keeps the token, and says the URL changed', async () => {
    const record = join(tempDir(), 'hooks.jsonl');
    const first = await listen(['--record', record, '--inspect', '0', '--quiet']);
    const token = new URL(first.page).pathname.split('/')[1]!;
    const port = Number(new URL(first.page).port);
    await first.stop('SIGTERM');
    const squatter = createServer((_req, res) => res.end('another app'));
    await new Promise<void>((resolve) => squatter.listen(port, '127.0.0.1', resolve));
    cleanup.push(() => new Promise<void>((resolve) => squatter.close(() => resolve())));
    const second = await listen(['--record', record, '--inspect', '--quiet']);
    const moved = new URL(second.page);
    expect(moved.pathname.split('/')[1]).toBe(token);
    expect(Number(moved.port)).not.toBe(port);
    expect(second.stderr()).toContain(`the URL changed: port ${port} of the last run is not this run's, open the page again at this URL`);
    expect(JSON.parse(readFileSync(`${record}.inspector`, 'utf8'))).toEqual({ token, port: Number(moved.port) });
    expect((await request(`${second.page}api/deliveries`)).statusCode).toBe(200);
  });

  it('without --record a new token each run; a stale or missing token gets a short HTML page, never the token', async () => {
    const dir = tempDir();
    const old = await listen(['--inspect', '0']);
    expect(old.stderr()).toContain("(the token in this URL is the page's key; it ends with this run: --record keeps it)");
    const oldToken = new URL(old.page).pathname.split('/')[1]!;
    await old.stop('SIGTERM');
    const l = await listen(['--inspect', '0', '--record', join(dir, 'h.jsonl')]);
    const token = new URL(l.page).pathname.split('/')[1]!;
    expect(token).not.toBe(oldToken);
    const origin = new URL(l.page).origin;
    for (const path of [`/${oldToken}/`, '/', `/${oldToken}`, `/${oldToken}/index.html`]) {
      const res = await request(`${origin}${path}`);
      expect(res.statusCode, path).toBe(403);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.headers['content-security-policy']).toBe(CSP);
      const html = await res.body.text();
      expect(html).toContain('<code>Inspector:</code>');
      expect(html).toContain(`${join(dir, 'h.jsonl')}.inspector`);
      expect(html).not.toContain(token);
      expect(html).not.toMatch(/<script|<style|\sstyle=|\son[a-z]+=/i);
    }
    // The API and the stream keep their JSON errors.
    for (const path of [`/${oldToken}/api/deliveries`, `/${oldToken}/events`, `/${oldToken}/deliveries/1`]) {
      const res = await request(`${origin}${path}`);
      expect([res.statusCode, res.headers['content-type']], path).toEqual([403, 'application/json; charset=utf-8']);
      expect(await res.body.json()).toEqual({ error: 'forbidden' });
    }
    // A wrong Host stays a JSON 403.
    const rebound = await request(`${origin}/`, { headers: { host: 'evil.example' } });
    expect([rebound.statusCode, rebound.headers['content-type']]).toEqual([403, 'application/json; charset=utf-8']);
    await rebound.body.dump();
  });

  it('refuses a <record>.inspector it did not write, naming it, before anything listens; the file is left as it was', async () => {
    const dir = tempDir();
    const record = join(dir, 'hooks.jsonl');
    writeFileSync(`${record}.inspector`, 'keep me\n', { mode: 0o644 });
    const r = await runCli(['webhook', 'listen', '--port', '0', '--record', record, '--inspect', '0'], { env: { CARDBOARD_SIGNING_KEY: KEY } });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`cannot use ${record}.inspector for the inspector's token: others can read or write it`);
    expect(r.stderr).not.toContain('Listening on');
    expect(readFileSync(`${record}.inspector`, 'utf8')).toBe('keep me\n');
    expect(mode(`${record}.inspector`)).toBe(0o644);
  });
});
