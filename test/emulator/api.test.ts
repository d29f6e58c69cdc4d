import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  BOARD_ID,
  CREATE_FIELDS_BOARD_ID,
  CREATE_FIELDS_TOKEN,
  CREATE_NEW_BOARD_ID,
  CREATE_NEW_TOKEN,
  FIELDS,
  type RunningEmulator,
  startTestEmulator,
  TOKEN,
} from '../helpers/emulator.js';
import { call } from './http.js';

const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let emu: RunningEmulator;
beforeEach(async () => {
  emu = await startTestEmulator({ pageSize: 3 });
});
afterEach(async () => {
  await emu.close();
});

const put = (body: unknown, board = BOARD_ID, token = TOKEN) => call(emu, 'POST', `/api/aptlet/${board}`, { token, body });

describe('schema (spec 4.2)', () => {
  it('answers the same field objects on both paths', async () => {
    const a = await call(emu, 'GET', `/api/aptlet/${BOARD_ID}/schema`, { token: TOKEN });
    const b = await call(emu, 'GET', `/api/schema/${BOARD_ID}`, { token: TOKEN });
    expect(a.status).toBe(200);
    expect(b.status).toBe(200);
    expect(a.headers.get('content-type')).toBe('application/json');
    const fields = a.json as { name: string; uuid: string }[];
    expect(fields.map((f) => f.name)).toEqual(FIELDS);
    for (const f of fields) expect(f.uuid).toMatch(UUID);
    expect(b.json).toEqual(a.json);
  });
});

describe('create and update (spec 4.3)', () => {
  it('creates a card with an _id, keeping exact names and dropping other cases silently', async () => {
    const r = await put({ Name: 'A', status: 'lower', STATUS: 'upper', Owner: 'Ada', Nope: 1 });
    expect(r.status).toBe(200);
    const card = r.json as Record<string, unknown>;
    expect(card).toEqual({ _id: expect.stringMatching(/^[23456789ABCDEFGHJKLMNPQRSTWXYZabcdefghijkmnopqrstuvwxyz]{17}$/), Name: 'A', Owner: 'Ada' });
    expect(emu.state()[BOARD_ID]!.cards).toEqual([card]);
    expect(emu.state()[BOARD_ID]!.fields.map((f) => f.name)).toEqual(FIELDS);
  });

  it('adds unknown keys as new fields with a new uuid when Create Fields is on', async () => {
    const r = await put({ Name: 'A', Colour: 'red', status: 'x' }, CREATE_FIELDS_BOARD_ID, CREATE_FIELDS_TOKEN);
    expect(r.json).toMatchObject({ Name: 'A', Colour: 'red', status: 'x' });
    const schema = await call(emu, 'GET', `/api/schema/${CREATE_FIELDS_BOARD_ID}`, { token: CREATE_FIELDS_TOKEN });
    const fields = schema.json as { name: string; uuid: string }[];
    expect(fields.map((f) => f.name)).toEqual(['Name', 'Status', 'Colour', 'status']);
    expect(new Set(fields.map((f) => f.uuid)).size).toBe(4);
  });

  it('Update if exists: merges into the card with that _id', async () => {
    const first = (await put({ Name: 'A', Status: 'To do' })).json as { _id: string };
    const r = await put({ _id: first._id, Status: 'Done', Owner: 'Grace' });
    expect(r.json).toEqual({ _id: first._id, Name: 'A', Status: 'Done', Owner: 'Grace' });
    expect(emu.state()[BOARD_ID]!.cards).toEqual([{ _id: first._id, Name: 'A', Status: 'Done', Owner: 'Grace' }]);
  });

  it('Update if exists: an unknown _id creates a new card with a fresh server id', async () => {
    const r = await put({ _id: 'not-a-card', Name: 'B' });
    const card = r.json as { _id: string };
    expect(card._id).not.toBe('not-a-card');
    expect(emu.state()[BOARD_ID]!.cards).toEqual([{ _id: card._id, Name: 'B' }]);
  });

  it('Always Create New: ignores _id and inserts every time', async () => {
    const first = (await put({ Name: 'A' }, CREATE_NEW_BOARD_ID, CREATE_NEW_TOKEN)).json as { _id: string };
    const second = (await put({ _id: first._id, Name: 'B' }, CREATE_NEW_BOARD_ID, CREATE_NEW_TOKEN)).json as { _id: string };
    expect(second._id).not.toBe(first._id);
    expect(emu.state()[CREATE_NEW_BOARD_ID]!.cards.map((c) => c.Name)).toEqual(['A', 'B']);
  });

  it('keeps a field named __proto__ as a plain key', async () => {
    const r = await put('{"Name":"x","__proto__":{"polluted":true}}', CREATE_FIELDS_BOARD_ID, CREATE_FIELDS_TOKEN);
    expect(r.status).toBe(200);
    expect(JSON.parse(r.text)).toEqual(JSON.parse(`{"_id":"${(r.json as { _id: string })._id}","Name":"x","__proto__":{"polluted":true}}`));
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('read (spec 4.4, 4.5)', () => {
  it('gets one card; 404 for an unknown card', async () => {
    const card = (await put({ Name: 'A' })).json as { _id: string };
    expect((await call(emu, 'GET', `/api/aptlet/${BOARD_ID}/card/${card._id}`, { token: TOKEN })).json).toEqual(card);
    const missing = await call(emu, 'GET', `/api/aptlet/${BOARD_ID}/card/ffffffffffffffffffffffff`, { token: TOKEN });
    expect(missing.status).toBe(404);
    expect(missing.json).toEqual({ error: 'Not found' });
  });

  it('lists zero-based pages of --page-size cards, [] past the end, no total', async () => {
    for (const n of [1, 2, 3, 4, 5]) await put({ Name: `c${n}` });
    const page = async (p: string) => call(emu, 'GET', `/api/aptlet/${BOARD_ID}?page=${p}`, { token: TOKEN });
    const names = (r: { json: unknown }) => (r.json as { Name: string }[]).map((c) => c.Name);
    expect(names(await page('0'))).toEqual(['c1', 'c2', 'c3']);
    expect(names(await page('1'))).toEqual(['c4', 'c5']);
    const end = await page('2');
    expect(end.status).toBe(200);
    expect(end.text).toBe('[]');
    expect(names(await call(emu, 'GET', `/api/aptlet/${BOARD_ID}`, { token: TOKEN }))).toEqual(['c1', 'c2', 'c3']);
    for (const bad of ['-1', 'abc', '1.5', '']) {
      const r = await page(bad);
      expect(r.status).toBe(400);
      expect(r.json).toEqual({ error: 'Bad request' });
    }
  });

  it('percent-decodes path parameters: spaces, %2F and Unicode in a board id', async () => {
    const id = 'team a/ü 🚀';
    const e = await startTestEmulator({ boards: { [id]: { token: 't', fields: ['Name'] } } });
    try {
      const r = await call(e, 'POST', `/api/aptlet/${encodeURIComponent(id)}`, { token: 't', body: { Name: 'x' } });
      expect(r.status).toBe(200);
      expect(e.state()[id]!.cards).toHaveLength(1);
      expect((await call(e, 'GET', `/api/schema/${encodeURIComponent(id)}`, { token: 't' })).status).toBe(200);
      expect((await call(e, 'GET', '/api/schema/%E0%A4%A', { token: 't' })).status).toBe(400);
    } finally {
      await e.close();
    }
  });
});

describe('comments (spec 4.1, 2.1)', () => {
  it('answers a Comment object with createdAt in ISO 8601 UTC with milliseconds', async () => {
    const card = (await put({ Name: 'A' })).json as { _id: string };
    const r = await call(emu, 'POST', `/api/card/${card._id}/comment`, { token: TOKEN, body: { content: 'Looks good' } });
    expect(r.status).toBe(200);
    const c = r.json as Record<string, unknown>;
    expect(Object.keys(c).sort()).toEqual(['content', 'createdAt', 'id', 'seenByUsers', 'userId', 'userName']);
    expect(c).toMatchObject({ content: 'Looks good', seenByUsers: [] });
    expect(typeof c.id).toBe('string');
    expect(typeof c.userId).toBe('string');
    expect(typeof c.userName).toBe('string');
    expect(c.createdAt).toMatch(ISO_MS);
    expect(emu.state()[BOARD_ID]!.comments).toEqual({ [card._id]: [c] });
  });

  it("needs the token of the card's own board; 404 for an unknown card; 400 without content", async () => {
    const card = (await put({ Name: 'A' })).json as { _id: string };
    const path = `/api/card/${card._id}/comment`;
    expect((await call(emu, 'POST', path, { token: CREATE_NEW_TOKEN, body: { content: 'x' } })).status).toBe(401);
    expect((await call(emu, 'POST', '/api/card/nope/comment', { token: TOKEN, body: { content: 'x' } })).status).toBe(404);
    expect((await call(emu, 'POST', path, { token: TOKEN, body: {} })).status).toBe(400);
    expect(emu.state()[BOARD_ID]!.comments).toEqual({});
  });
});

describe('errors the spec leaves open', () => {
  it('401 {"error":"Unauthorized"} for no token, a wrong token and another board’s token', async () => {
    for (const token of [undefined, 'wrong', CREATE_NEW_TOKEN]) {
      const r = await call(emu, 'GET', `/api/aptlet/${BOARD_ID}/schema`, { token });
      expect(r.status).toBe(401);
      expect(r.json).toEqual({ error: 'Unauthorized' });
      expect((await call(emu, 'POST', `/api/aptlet/${BOARD_ID}`, { token, body: { Name: 'A' } })).status).toBe(401);
    }
    expect(emu.state()[BOARD_ID]!.cards).toEqual([]);
  });

  it('404 {"error":"Not found"} for an unknown board or path', async () => {
    for (const path of ['/api/aptlet/nope/schema', '/api/schema/nope', '/api/aptlet/nope', '/api/other', '/']) {
      const r = await call(emu, 'GET', path, { token: TOKEN });
      expect(r.status, path).toBe(404);
      expect(r.json).toEqual({ error: 'Not found' });
    }
  });

  it('400 {"error":"Bad request"} for bad JSON, a non-object, or a wrong content type; nothing stored', async () => {
    const bad = [
      { body: '{"Name":', contentType: 'application/json' },
      { body: '[{"Name":"A"}]', contentType: 'application/json' },
      { body: '"A"', contentType: 'application/json' },
      { body: 'null', contentType: 'application/json' },
      { body: '{"Name":"A"}', contentType: 'text/plain' },
      { body: '{"Name":"A"}', contentType: null },
    ];
    for (const b of bad) {
      const r = await call(emu, 'POST', `/api/aptlet/${BOARD_ID}`, { token: TOKEN, ...b });
      expect(r.status, JSON.stringify(b)).toBe(400);
      expect(r.json).toEqual({ error: 'Bad request' });
    }
    const ok = await call(emu, 'POST', `/api/aptlet/${BOARD_ID}`, {
      token: TOKEN,
      body: { Name: 'A' },
      contentType: 'application/json; charset=utf-8',
    });
    expect(ok.status).toBe(200);
    expect(emu.state()[BOARD_ID]!.cards).toHaveLength(1);
  });

  it('405 for a method an endpoint does not take', async () => {
    expect((await call(emu, 'DELETE', `/api/aptlet/${BOARD_ID}`, { token: TOKEN })).status).toBe(405);
  });
});

describe('test view', () => {
  it('records requests with the token hidden, over the API and over HTTP', async () => {
    await put({ Name: 'A' });
    const recs = emu.requests();
    expect(recs).toHaveLength(1);
    expect(recs[0]).toMatchObject({ method: 'POST', path: `/api/aptlet/${BOARD_ID}`, status: 200, body: { Name: 'A' } });
    expect(recs[0]!.headers['x-token']).toBe('***');
    expect(JSON.stringify(recs)).not.toContain(TOKEN);
    const overHttp = await call(emu, 'GET', '/__emulator/requests');
    expect(overHttp.json).toEqual(recs);
    expect((await call(emu, 'GET', '/__emulator/state')).json).toEqual(emu.state());
    expect((await call(emu, 'POST', '/__emulator/reset-requests')).status).toBe(200);
    expect(emu.requests()).toEqual([]);
  });

  it('seeds demo cards into the first board', async () => {
    const e = await startTestEmulator({ seedCards: 4 });
    try {
      const cards = e.state()[BOARD_ID]!.cards;
      expect(cards.map((c) => c.Name)).toEqual(['Demo card 1', 'Demo card 2', 'Demo card 3', 'Demo card 4']);
      expect(Object.keys(cards[0]!)).toEqual(['_id', ...FIELDS]);
    } finally {
      await e.close();
    }
  });
});
