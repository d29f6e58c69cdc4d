// `cardboard api` against the independent server: its own page size, a path prefix on the base URL,
// 201 for a creation, gzip and a byte order mark. The token travels in x-token alone (violations empty).
import { describe, expect, it } from 'vitest';
import { run, seen, start } from './helpers.js';

describe('cardboard api against the alt server', () => {
  it('--paginate: every card once, in order, pages of 7 under a path prefix; the token only in x-token', async () => {
    const s = await start({ prefix: '/svc/v2', gzip: 'always', bom: true, idStyle: 'odd' });
    s.seed(20);
    const r = await run(s, ['api', 'GET', '/api/aptlet/{board}', '--paginate']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(s.cards);
    const gets = seen(s, 'GET');
    expect(gets.map((q) => q.url)).toEqual([0, 1, 2, 3].map((p) => `/svc/v2/api/aptlet/board-7?page=${p}`));
    for (const q of gets) {
      expect(q.headers['x-token']).toBe(s.opts.token);
      expect(q.url).not.toContain(s.opts.token);
    }
  });

  it('a page to start from in the path: the walk begins there', async () => {
    const s = await start();
    s.seed(20);
    const r = await run(s, ['api', '/api/aptlet/{board}?page=2', '--paginate']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(s.cards.slice(14));
  });

  it('one card, piped: the bytes as the server sent them (gunzipped, its byte order mark kept)', async () => {
    const s = await start({ gzip: 'always', bom: true, idStyle: 'odd' });
    const [, id] = s.seed(2);
    const r = await run(s, ['api', `/api/aptlet/{board}/card/${encodeURIComponent(id!)}`]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(`\uFEFF${JSON.stringify(s.cards[1])}`);
  });

  it('POST with typed fields: a 201 is success, the body is JSON with its content type', async () => {
    const s = await start({ prefix: '/svc/v2' });
    const r = await run(s, ['api', 'POST', '/api/aptlet/{board}', '-f', 'Title=From api', '-F', 'Estimate=2.5', '-F', 'Due Date=null']);
    expect(r.code, r.stderr).toBe(0);
    expect(s.cards).toHaveLength(1);
    expect(s.cards[0]).toMatchObject({ Title: 'From api', Estimate: 2.5, 'Due Date': null });
    expect(JSON.parse(r.stdout)).toEqual(s.cards[0]);
    expect(JSON.parse(seen(s, 'POST')[0]!.body)).toEqual({ Title: 'From api', Estimate: 2.5, 'Due Date': null });
  });

  it('a full URL on the base URL is sent; one that climbs out of its path prefix is refused (exit 2)', async () => {
    const s = await start({ prefix: '/svc/v2' });
    const ok = await run(s, ['api', `${s.url}/api/aptlet/{board}/schema`]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout)).toEqual({ fields: s.fields });
    for (const path of ['/../other/api', `${s.url}/../../api/aptlet/{board}`]) {
      const r = await run(s, ['api', path]);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain("error: refusing to send the board's token to");
    }
    expect(s.requests).toHaveLength(1);
  });

  it('an error in HTML: exit 1, its text in the message', async () => {
    const s = await start({ htmlNotFound: true });
    const r = await run(s, ['api', '/api/aptlet/{board}/card/nope']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('error: 404 Not Found from GET');
    expect(r.stderr).toContain('<h1>404 Not Found</h1>');
  });
});
