// The hostile server misbehaves as each mode says, so tests that use it prove what they claim.
import { afterEach, describe, expect, it } from 'vitest';
import { HOSTILE_FIELDS, startHostileServer, type HostileServer } from './hostile-server.js';

let server: HostileServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function get(s: HostileServer, path: string): Promise<{ status: number; body: unknown; headers: Headers }> {
  const res = await fetch(s.url + path, { headers: { 'x-token': s.token } });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
}

describe('hostile server', () => {
  it('repeat-page answers the same page for every page number', async () => {
    server = await startHostileServer({ mode: 'repeat-page' });
    const a = await get(server, `/api/aptlet/${server.boardId}?page=0`);
    const b = await get(server, `/api/aptlet/${server.boardId}?page=7`);
    expect(a.body).toEqual(b.body);
    expect((a.body as unknown[]).length).toBeGreaterThan(0);
  });

  it('endless-ids never repeats an id and never ends', async () => {
    server = await startHostileServer({ mode: 'endless-ids' });
    const ids = new Set<string>();
    for (let page = 0; page < 5; page++) {
      const { body } = await get(server, `/api/aptlet/${server.boardId}?page=${page}`);
      for (const card of body as Array<{ _id: string }>) ids.add(card._id);
    }
    expect(ids.size).toBe(15);
  });

  it('null-in-page, huge-retry-after, past-retry-after, no-id, echo-token, escapes', async () => {
    server = await startHostileServer({ mode: 'null-in-page' });
    expect((await get(server, `/api/aptlet/${server.boardId}?page=0`)).body).toContain(null);
    server.setMode('huge-retry-after');
    const limited = await get(server, `/api/aptlet/${server.boardId}/schema`);
    expect([limited.status, limited.headers.get('retry-after')]).toEqual([429, '999999']);
    server.setMode('past-retry-after');
    const past = await get(server, `/api/aptlet/${server.boardId}/schema`);
    expect(past.status).toBe(429);
    expect(Date.parse(past.headers.get('retry-after') ?? '')).toBeLessThan(Date.now() - 30_000);
    server.setMode('no-id');
    const post = await fetch(`${server.url}/api/aptlet/${server.boardId}`, { method: 'POST', headers: { 'x-token': server.token }, body: '{"Title":"x"}' });
    expect(await post.json()).not.toHaveProperty('_id');
    server.setMode('echo-token');
    const echoed = await fetch(`${server.url}/api/aptlet/${server.boardId}`, { method: 'POST', headers: { 'x-token': server.token }, body: '{}' });
    expect([echoed.status, await echoed.text()]).toEqual([400, expect.stringContaining(server.token)]);
    server.setMode('escapes');
    const names = ((await get(server, `/api/aptlet/${server.boardId}/schema`)).body as Array<{ name: string }>).map((f) => f.name);
    expect(names).toEqual(expect.arrayContaining([...HOSTILE_FIELDS]));
  });

  it('trickle sends headers at once and the body a byte at a time', async () => {
    server = await startHostileServer({ mode: 'trickle', trickleMs: 5 });
    const started = Date.now();
    const res = await fetch(`${server.url}/api/aptlet/${server.boardId}/schema`, { headers: { 'x-token': server.token } });
    const headersAfter = Date.now() - started;
    const text = await res.text();
    expect(JSON.parse(text)).toHaveLength(2);
    // Causal, not timed: the body took at least one tick per byte after the headers came.
    expect(Date.now() - started - headersAfter).toBeGreaterThanOrEqual(text.length * 5 * 0.5);
  });
});
