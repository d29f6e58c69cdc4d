// The router of `webhook listen`'s filters in process: what each kind of delivery matches, the decisions kept
// by sequence number over many deliveries, and the names of the routes' ack logs.
import { describe, expect, it } from 'vitest';
import { whereWithoutSchema } from '../../src/schema/where.js';
import { CardStates } from '../../src/webhook/changes.js';
import type { Delivery } from '../../src/webhook/delivery.js';
import { type FilterSpec, routeCursorPath, Router, type Routing } from '../../src/webhook/routes.js';

const d = (seq: number, body: unknown): Delivery => ({ seq, receivedAt: '2026-11-27T16:00:00.000Z', method: 'POST', path: '/', headers: {}, body: Buffer.from(JSON.stringify(body)) });
const filter = (where: string[] = [], changed: string[] = []): FilterSpec => ({ where: whereWithoutSchema(where), changed });
const NONE = filter();

function feed(router: Router, bodies: unknown[]) {
  const states = new CardStates();
  return bodies.map((body, i) => {
    const delivery = d(i + 1, body);
    return router.decide(delivery, states.apply(delivery.body), states);
  });
}

describe('Router', () => {
  it('matches cards only: a delete, a comment and a body that is no card match no --changed and no --where', () => {
    const router = new Router({ global: NONE, routes: [{ url: 'http://a/', filter: filter(['Status!=Open']) }, { url: 'http://b/', filter: filter([], ['Status']) }] }, { secrets: [] });
    const decisions = feed(router, [
      { _id: 'c1', Status: 'Done' },
      { _id: 'c1', deleted: true },
      { event: 'comment.created', data: { cardId: 'c1', content: 'hi', userName: 'Ada' } },
      [1, 2, 3],
      'text',
    ]);
    expect(decisions.map((x) => x.routes)).toEqual([['http://a/', 'http://b/'], [], [], [], []]);
    expect(decisions.map((x) => x.printed)).toEqual([true, false, false, false, false]);
  });

  it('reads --where on the card after the delivery: a field the body leaves out keeps its last value', () => {
    const router = new Router({ global: filter(['Owner=ann']), routes: [] }, { secrets: [] });
    const decisions = feed(router, [{ _id: 'p1', Owner: 'ann', Status: 'Open' }, { _id: 'p1', Status: 'Done' }, { _id: 'p2', Status: 'Done' }]);
    expect(decisions.map((x) => x.printed)).toEqual([true, true, false]);
  });

  it('keeps each decision by sequence number over many deliveries; one never decided is judged on its body alone', () => {
    const routing: Routing = { global: NONE, routes: [{ url: 'http://a/', filter: filter([], ['Status']) }] };
    const router = new Router(routing, { secrets: [] });
    const states = new CardStates();
    // From seq 5000 on (a record file's tail): even seqs change Status, odd ones only Name.
    for (let seq = 5000; seq < 25_000; seq++) {
      const delivery = d(seq, { _id: 'k', Status: `s${Math.floor(seq / 2)}`, Name: `n${seq}` });
      router.decide(delivery, states.apply(delivery.body), states);
    }
    const sample = [5000, 5001, 5002, 12_345, 12_346, 24_999];
    expect(sample.map((seq) => router.takes(0, d(seq, { _id: 'k', Name: 'x' })))).toEqual([true, false, true, false, true, false]);
    expect(router.taken(0, 5000, 5010)).toBe(5);
    // Before the history read: a card counted as new, so it "changed" each field its body has.
    expect(router.takes(0, d(10, { _id: 'k', Status: 'x' }))).toBe(true);
    expect(router.takes(0, d(11, { _id: 'k', Name: 'x' }))).toBe(false);
  });

  it('warns once per filter field that a card spells only in another case', () => {
    const warnings: string[] = [];
    const router = new Router({ global: filter(['status=Done'], ['owner']), routes: [] }, { secrets: [], warn: (m) => warnings.push(m) });
    feed(router, [{ _id: 'w1', Status: 'Done' }, { _id: 'w2', Status: 'Done', Owner: 'x' }, { _id: 'w3', Status: 'Done', Owner: 'y' }]);
    expect(warnings).toEqual([
      "a filter names the field 'status' and card w1 has 'Status': field names are case-sensitive, so it never matches that field; write 'Status'",
      "a filter names the field 'owner' and card w2 has 'Owner': field names are case-sensitive, so it never matches that field; write 'Owner'",
    ]);
  });
});

describe('routeCursorPath', () => {
  it('keeps <record>.forwarded for one unfiltered route; names every other by its URL and filters', () => {
    expect(routeCursorPath('/r/h.jsonl', { global: NONE, routes: [{ url: 'http://a/', filter: NONE }] }, 0)).toBe('/r/h.jsonl.forwarded');
    const two: Routing = { global: NONE, routes: [{ url: 'http://a/', filter: NONE }, { url: 'http://b/', filter: NONE }] };
    const [a, b] = [routeCursorPath('/r/h.jsonl', two, 0), routeCursorPath('/r/h.jsonl', two, 1)];
    expect(a).toMatch(/^\/r\/h\.jsonl\.forwarded-[0-9a-f]{12}$/);
    expect(a).not.toBe(b);
    // The same filters in another order are the same route; another filter is another route.
    const one = (where: string[]): Routing => ({ global: NONE, routes: [{ url: 'http://a/', filter: filter(where) }] });
    expect(routeCursorPath('/r/h.jsonl', one(['A=1', 'B=2']), 0)).toBe(routeCursorPath('/r/h.jsonl', one(['B=2', 'A=1']), 0));
    expect(routeCursorPath('/r/h.jsonl', one(['A=1']), 0)).not.toBe(routeCursorPath('/r/h.jsonl', one(['A=2']), 0));
  });
});
