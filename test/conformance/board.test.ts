import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, tempDir } from '../helpers/cli.js';
import { ndjson, noLeak, run, runOnPty, seen, start } from './helpers.js';

const stored = (configDir: string) => JSON.parse(readFileSync(join(configDir, 'config.json'), 'utf8'));
const mode = (file: string) => statSync(file).mode & 0o777;

describe('board add against the alt server', () => {
  it('--token-stdin verifies against a wrapped schema, under a path prefix, with a board id that needs encoding', async () => {
    const s = await start({ boardId: 'team a/b ü#1', prefix: '/svc/v2' });
    expect(s.postUrl).toBe(`${s.url}/api/aptlet/team%20a%2Fb%20%C3%BC%231`);
    const configDir = tempDir();
    const r = await runCli(['board', 'add', 'alt', '--url', s.postUrl, '--token-stdin'], { configDir, input: `${s.opts.token}\n` });
    noLeak(s, r);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`verified, ${s.fields.length} fields`);
    expect(s.requests.map((q) => q.url)).toEqual(['/svc/v2/api/aptlet/team%20a%2Fb%20%C3%BC%231/schema']);
    expect(stored(configDir).boards.alt).toEqual({ id: 'team a/b ü#1', baseUrl: s.url, token: s.opts.token });
    expect(mode(join(configDir, 'config.json'))).toBe(0o600);

    // The stored board works with no environment at all.
    const schema = await runCli(['schema', '--json'], { configDir });
    noLeak(s, schema);
    expect(schema.code, schema.stderr).toBe(0);
    expect(JSON.parse(schema.stdout)).toEqual(s.fields);
  });

  it('a POST URL pasted with raw spaces and Unicode is read the same way', async () => {
    const s = await start({ boardId: 'équipe 1' });
    const configDir = tempDir();
    const r = await runCli(['board', 'add', 'fr', '--url', `${s.url}/api/aptlet/équipe 1`, '--token-stdin'], { configDir, input: s.opts.token });
    expect(r.code, r.stderr).toBe(0);
    expect(stored(configDir).boards.fr.id).toBe('équipe 1');
  });

  it('a POST URL with a broken percent escape is a usage error, not a crash', async () => {
    const r = await runCli(['board', 'add', 'x', '--url', 'https://cards.example.com/api/aptlet/50%zz', '--token-stdin'], { input: 'tok' });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^error: .*50%zz/);
    expect(r.stderr).not.toContain('bug');
  });

  it('a 403 with an HTML page on verify: exit 4, nothing saved, no HTML, no token', async () => {
    const s = await start({ authStatus: 403, errorStyle: 'html' });
    const configDir = tempDir();
    const wrong = 'not-the-token-5521';
    const r = await runCli(['board', 'add', 'alt', '--url', s.postUrl, '--token-stdin'], { configDir, input: wrong });
    noLeak(s, r, [wrong]);
    expect(r.code).toBe(4);
    expect(r.stderr).toContain('refused the token for board board-7 (403)');
    expect(r.stderr).not.toMatch(/<\/|<(html|body|h1)\b/i);
    expect(() => statSync(join(configDir, 'config.json'))).toThrow();
  });

  it('hidden prompt on a real terminal: the token is not echoed, is verified, and is saved 0600', async () => {
    const s = await start();
    const configDir = tempDir();
    const r = await runOnPty(['board', 'add', 'alt', '--url', s.postUrl], {
      configDir,
      env: { NO_COLOR: '1' },
      expect: 'API token',
      answer: `${s.opts.token}\r`,
    });
    expect(r.code, r.screen).toBe(0);
    expect(r.screen).toContain('API token (input hidden):');
    expect(r.screen).toContain('Saved board "alt"');
    expect(r.screen).not.toContain(s.opts.token);
    expect(s.requests).toHaveLength(1);
    expect(s.requests[0]!.headers['x-token']).toBe(s.opts.token);
    expect(stored(configDir).boards.alt.token).toBe(s.opts.token);
    expect(mode(join(configDir, 'config.json'))).toBe(0o600);
    expect(mode(configDir)).toBe(0o700);
  });
});

describe('the POST URL as the base URL, against the alt server', () => {
  it('CARDBOARD_BASE_URL or --base-url = the POST URL, under a path prefix, with an id that needs encoding: put, get, list', async () => {
    const s = await start({ boardId: 'team a/b ü#1', prefix: '/svc/v2' });
    const board = `/svc/v2/api/aptlet/${encodeURIComponent('team a/b ü#1')}`;
    const ways = [
      { globals: [], env: { CARDBOARD_BASE_URL: s.postUrl, CARDBOARD_BOARD: undefined } },
      { globals: ['--base-url', `${s.postUrl}/`], env: { CARDBOARD_BASE_URL: undefined, CARDBOARD_BOARD: undefined } },
    ];
    for (const { globals, env } of ways) {
      const put = await run(s, [...globals, 'card', 'put', 'Title=Via the POST URL'], { env });
      expect(put.code, put.stderr).toBe(0);
      const id = put.stdout.trim();
      const get = await run(s, [...globals, 'card', 'get', id, '--fields', 'Title', '--format', 'json'], { env });
      expect(get.code, get.stderr).toBe(0);
      expect(JSON.parse(get.stdout)).toEqual({ _id: id, Title: 'Via the POST URL' });
      const list = await run(s, [...globals, 'card', 'list', '--all', '--fields', 'Title'], { env });
      expect(list.code, list.stderr).toBe(0);
      expect(ndjson(list.stdout)).toContainEqual({ _id: id, Title: 'Via the POST URL' });
    }
    expect(s.requests.every((q) => q.url.startsWith(board)), s.requests.map((q) => q.url).join(' ')).toBe(true);
    expect(seen(s, 'POST')).toHaveLength(2);
  });

  it('another board named beside it is exit 2 before any request', async () => {
    const s = await start({ prefix: '/svc' });
    const r = await run(s, ['card', 'list'], { env: { CARDBOARD_BASE_URL: s.postUrl, CARDBOARD_BOARD: 'board-8' } });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('error: CARDBOARD_BASE_URL is the POST URL of board board-7, but CARDBOARD_BOARD names board board-8.\n');
    expect(s.requests).toEqual([]);
  });
});
