// The inspector's JSON API: list with filters, one delivery, clear; the checks every route keeps.
import { request as httpRequest } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { CardStates } from '../../src/webhook/changes.js';
import type { Inspector } from '../../src/webhook/inspector/server.js';
import { within } from '../helpers/wait.js';
import { act, type Cleanup, delivery, expectSecurityHeaders, raw, receiver, startInspector } from './inspector-helpers.js';

let cleanup: Cleanup = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
});

/** Five deliveries of two cards: c1 new, c2 new, c1 Status changed, c2 Points changed, c1 unchanged. */
async function withCards(opts: Parameters<typeof startInspector>[1] = {}): Promise<Inspector> {
  const i = await startInspector(cleanup, opts);
  const states = new CardStates();
  const bodies = [
    { _id: 'c1', Name: 'Alpha', Status: 'Open', Points: 3 },
    { _id: 'c2', Name: 'Beta <script>', Status: 'Open', Points: 5 },
    { _id: 'c1', Name: 'Alpha', Status: 'Done', Points: 3 },
    { _id: 'c2', Name: 'Beta <script>', Status: 'Open', Points: 8 },
    { _id: 'c1', Name: 'Alpha', Status: 'Done', Points: 3 },
  ];
  bodies.forEach((b, n) => {
    const body = Buffer.from(JSON.stringify(b));
    i.add(delivery(n + 1, body), states.apply(body), { recorded: false });
  });
  return i;
}

async function list(i: Inspector, query = ''): Promise<{ status: number; seqs: number[]; body: Record<string, unknown> }> {
  const r = await raw(i.port, 'GET', `/${i.token}/api/deliveries${query}`);
  const body = JSON.parse(r.text) as Record<string, unknown>;
  return { status: r.status, seqs: ((body.deliveries as Array<{ seq: number }> | undefined) ?? []).map((d) => d.seq), body };
}

describe('inspector API: list', () => {
  it('lists the kept deliveries newest first, as the stream\'s entries, with kept and dropped', async () => {
    const i = await withCards({ maxEntries: 4 });
    const r = await raw(i.port, 'GET', `/${i.token}/api/deliveries`);
    expect(r.status).toBe(200);
    expectSecurityHeaders(r);
    expect(r.headers['content-type']).toBe('application/json; charset=utf-8');
    const body = JSON.parse(r.text) as { deliveries: Array<Record<string, unknown>>; kept: number; dropped: number };
    expect(body.deliveries.map((d) => d.seq)).toEqual([5, 4, 3, 2]);
    expect([body.kept, body.dropped]).toEqual([4, 1]);
    expect(body.deliveries[1]).toMatchObject({ seq: 4, method: 'POST', verified: true, recorded: false, change: { event: 'changed', cardId: 'c2', changes: [{ field: 'Points', before: 5, after: 8 }] } });
    expect(body.deliveries[1]!.preview).toBe('{"_id":"c2","Name":"Beta <script>","Status":"Open","Points":8}');
    expect((await list(i, '?limit=2')).seqs).toEqual([5, 4]);
  });

  it('filters by what the change touched (changed=Field) and by the card\'s fields (where=EXPR, as card list --where)', async () => {
    const i = await withCards();
    expect((await list(i, '?changed=Status')).seqs).toEqual([3, 2, 1]);
    expect((await list(i, '?changed=Points')).seqs).toEqual([4, 2, 1]);
    expect((await list(i, '?changed=Status&changed=Points')).seqs).toEqual([2, 1]);
    expect((await list(i, '?where=Status%3DDone')).seqs).toEqual([5, 3]);
    expect((await list(i, `?where=${encodeURIComponent('Points>4')}`)).seqs).toEqual([4, 2]);
    expect((await list(i, `?where=${encodeURIComponent('Name~beta')}&where=${encodeURIComponent('Points<6')}`)).seqs).toEqual([2]);
    expect((await list(i, `?where=${encodeURIComponent('_id=c1')}&changed=Status&limit=1`)).seqs).toEqual([3]);
    // A field no card has matches none; it is no error (another board's cards may have it).
    expect((await list(i, '?where=Owner%3Dme')).seqs).toEqual([]);
    expect((await list(i, '?changed=Owner')).seqs).toEqual([]);
  });

  it('answers 400 naming the mistake: an expression that does not parse, a bad limit, an unknown parameter', async () => {
    const i = await withCards();
    const cases: Array<[string, RegExp]> = [
      ['?where=Status', /^where='Status': it has no operator \(Write Field=value/],
      [`?where=${encodeURIComponent('=Done')}`, /^where='=Done': the field name before the operator is empty/],
      [`?where=${encodeURIComponent('Points>many')}`, /^where='Points>many': > compares numbers, and it is followed by 'many', which is not a number/],
      ['?limit=0', /^limit must be a whole number from 1: "0"/],
      ['?limit=x', /^limit must be a whole number/],
      ['?limit=1&limit=2', /^limit is given more than once/],
      ['?limt=2', /^unknown parameter "limt": use limit, changed or where/],
    ];
    for (const [query, message] of cases) {
      const r = await list(i, query);
      expect(r.status, query).toBe(400);
      expect(r.body.error, query).toMatch(message);
    }
  });

  it('shows one delivery as deliveries/<seq> does; 404 never received, a page path stays JSON', async () => {
    const i = await withCards();
    const api = await raw(i.port, 'GET', `/${i.token}/api/deliveries/3`);
    const page = await raw(i.port, 'GET', `/${i.token}/deliveries/3`);
    expect(api.status).toBe(200);
    expect(api.text).toBe(page.text);
    expect(JSON.parse(api.text)).toMatchObject({ seq: 3, body: { _id: 'c1', Status: 'Done' }, headers: { 'x-signingKey': '***' } });
    const none = await raw(i.port, 'GET', `/${i.token}/api/deliveries/9`);
    expect([none.status, JSON.parse(none.text).error]).toEqual([404, 'no delivery #9 was received']);
    expect((await raw(i.port, 'GET', `/${i.token}/api/deliveries/x`)).status).toBe(404);
    expect((await raw(i.port, 'GET', `/${i.token}/api/nothing`)).status).toBe(404);
    const put = await raw(i.port, 'PUT', `/${i.token}/api/deliveries`);
    expect([put.status, put.headers.allow]).toEqual([405, 'GET, DELETE']);
  });
});

describe('inspector API: clear', () => {
  it('DELETE forgets the kept entries (204), tells the open streams (`cleared`); a cleared seq is 410, new ones are kept', async () => {
    const app = await receiver(cleanup);
    const i = await withCards({ forwardTo: app.url });
    const events: string[] = [];
    const req = httpRequest({ host: '127.0.0.1', port: i.port, path: `/${i.token}/events`, agent: false }, (res) => {
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => events.push(...[...chunk.matchAll(/^event: (.*)$/gm)].map((m) => m[1]!)));
    });
    req.end();
    cleanup.push(async () => void req.destroy());
    await within(
      (async () => {
        while (!events.includes('ready')) await new Promise((r) => setTimeout(r, 10));
      })(),
      { what: 'the stream\'s ready event' },
    );
    const r = await act(i, 'DELETE', 'api/deliveries');
    expect([r.status, r.text]).toEqual([204, '']);
    expectSecurityHeaders(r);
    await within(
      (async () => {
        while (!events.includes('cleared')) await new Promise((r) => setTimeout(r, 10));
      })(),
      { what: 'the stream\'s cleared event' },
    );
    expect((await list(i)).body).toEqual({ deliveries: [], kept: 0, dropped: 0 });
    const gone = await raw(i.port, 'GET', `/${i.token}/api/deliveries/3`);
    expect([gone.status, JSON.parse(gone.text).error]).toEqual([410, 'delivery #3 was cleared from the inspector; the record file, if any, still has it']);
    expect((await act(i, 'POST', 'replay', { seq: 3 })).status).toBe(410);
    expect(app.got).toHaveLength(0);
    i.add(delivery(6, '{"_id":"c3"}'), new CardStates().apply(Buffer.from('{"_id":"c3"}')), { recorded: false });
    expect((await list(i)).seqs).toEqual([6]);
  });

  it('is an action: without the token header, from another origin or by GET it clears nothing', async () => {
    const i = await withCards();
    expect((await act(i, 'DELETE', 'api/deliveries', undefined, { 'x-cardboard-token': 'nope' })).status).toBe(403);
    expect((await raw(i.port, 'DELETE', `/${i.token}/api/deliveries`)).status).toBe(403);
    expect((await act(i, 'DELETE', 'api/deliveries', undefined, { origin: 'http://evil.example' })).status).toBe(403);
    expect((await act(i, 'DELETE', 'api/deliveries', undefined, { host: 'evil.example' })).status).toBe(403);
    expect((await act(i, 'DELETE', `api/deliveries/3`)).status).toBe(405);
    expect((await list(i)).seqs).toHaveLength(5);
  });
});
