// The store of a board's mirror on PostgreSQL (src/mirror/pg/ops.ts), its operations called as the mirror's
// thread calls them, against a real server (test/helpers/postgres.ts): the rules of the SQLite store
// (store.test.ts) rule by rule, and what only a server shared by several processes brings: writers that take
// turns, walks of one snapshot, two first opens at once, a role that may only read.
import pg from 'pg';
import { describe, expect, it, onTestFinished } from 'vitest';
import { boardKey } from '../../src/mirror/pg/migrations.js';
import { openPgStore } from '../../src/mirror/pg/ops.js';
import type { PgStoreOps } from '../../src/mirror/pg/protocol.js';
import { UNPLACED_BODY_MAX } from '../../src/mirror/card-run.js';
import type { MirrorBoard, MirrorDelivery } from '../../src/mirror/types.js';
import { waitFor } from '../helpers/wait.js';
import { PG_REQUIRED, PG_SKIPPED, type PgSchema, pgClient, pgSchema } from '../helpers/postgres.js';
import { BOARD } from './helpers.js';

const T0 = '2030-01-01T10:00:00.000Z';
const T1 = '2030-01-01T10:05:00.000Z';
const LOCATION = 'postgres://test/postgres';
const card = (id: string, fields: Record<string, unknown> = {}) => ({ _id: id, ...fields });
const delivered = (c: ReturnType<typeof card>): MirrorDelivery => ({ kind: 'card', receivedAt: T0, card: c });
const deleted = (id: string): MirrorDelivery => ({ kind: 'deleted', receivedAt: T0, id });

/** Connections to the test server's schema of `s`, as the mirror's thread makes them. */
function connector(url: string, user?: string): () => Promise<pg.Client> {
  return async () => {
    const client = new pg.Client({ connectionString: user === undefined ? url : url.replace('//postgres@', `//${user}@`) });
    await client.connect();
    return client;
  };
}

/** The store of `board` in the schema of `s`, closed when the test ends. */
async function open(s: PgSchema, board: MirrorBoard = BOARD, create = true, user?: string): Promise<PgStoreOps> {
  const ops = await openPgStore(connector(s.url, user), board, LOCATION, create);
  onTestFinished(() => ops.close());
  return ops;
}

/**
 * The store of BOARD in the schema of `s` (closed when the test ends), with the connections it made, in the
 * order it made them: `clients[0]` is its writer's first.
 */
async function openKept(s: PgSchema): Promise<{ store: PgStoreOps; clients: pg.Client[] }> {
  const clients: pg.Client[] = [];
  const connect = connector(s.url);
  const store = await openPgStore(async () => clients[clients.push(await connect()) - 1]!, BOARD, LOCATION, true);
  onTestFinished(() => store.close());
  return { store, clients };
}

/** Every card of a walk, read `max` at a time. */
async function all(ops: PgStoreOps, max = 2): Promise<Record<string, unknown>[]> {
  const walk = await ops.cardsOpen();
  const out: Record<string, unknown>[] = [];
  for (;;) {
    const texts = await ops.cardsNext(walk, max);
    out.push(...texts.map((t) => JSON.parse(t) as Record<string, unknown>));
    if (texts.length < max) return out;
  }
}
const ids = async (ops: PgStoreOps) => (await all(ops)).map((c) => c._id);

describe.skipIf(PG_SKIPPED !== undefined && !PG_REQUIRED)('the mirror on PostgreSQL: its operations', () => {
  it('has a server to run on', () => {
    expect(PG_SKIPPED).toBeUndefined();
  });

  describe('savePage', () => {
    it('returns new and changed cards, nothing for a card repeated unchanged, and advances the pull row', async () => {
      const s = await pgSchema();
      const store = await open(s);
      const pull = await store.beginPull(T0);
      expect(await store.savePage(pull, 0, [card('a', { S: 'Open', N: { x: 1, y: 2 } }), card('b')])).toEqual([
        { id: 'a', after: card('a', { S: 'Open', N: { x: 1, y: 2 } }) },
        { id: 'b', after: card('b') },
      ]);
      expect(await store.savePage(pull, 1, [{ N: { y: 2, x: 1 }, S: 'Open', _id: 'a' }, card('b', { S: 'Done' })])).toEqual([
        { id: 'b', before: card('b'), after: card('b', { S: 'Done' }) },
      ]);
      expect(await store.card('b')).toEqual(card('b', { S: 'Done' }));
      expect(await store.count()).toBe(2);
      expect(await s.rows('SELECT next_page, pages, cards FROM pulls')).toEqual([[2, 2, 4]]);
    });

    it('keeps what a delivery said after the pull began, and takes the page over one applied before', async () => {
      const s = await pgSchema();
      const store = await open(s);
      await store.applyDeliveries([delivered(card('c', { S: 'Open' })), deleted('d')]);
      const first = await store.beginPull(T0);
      expect(await store.savePage(first, 0, [card('a', { S: 'Open' }), card('b', { S: 'Open' }), card('c', { S: 'Done' }), card('d')])).toEqual([
        { id: 'a', after: card('a', { S: 'Open' }) },
        { id: 'b', after: card('b', { S: 'Open' }) },
        { id: 'c', before: card('c', { S: 'Open' }), after: card('c', { S: 'Done' }) },
        { id: 'd', after: card('d') },
      ]);
      await store.finishPull(first, [], T0);
      const second = await store.beginPull(T1);
      await store.applyDeliveries([deleted('a'), delivered(card('b', { S: 'Done' }))]);
      expect(await store.savePage(second, 0, [card('a', { S: 'Open' }), card('b', { S: 'Open' })])).toEqual([]);
      expect(await store.card('a')).toBeUndefined();
      expect(await store.card('b')).toEqual(card('b', { S: 'Done' }));
    });

    it('keeps board order: the order read, a later sighting moving a card, cards delivered since at the end; a card twice on one page', async () => {
      const s = await pgSchema();
      const store = await open(s);
      const pull = await store.beginPull(T0);
      await store.savePage(pull, 0, [card('c'), card('a'), card('b')]);
      await store.savePage(pull, 1, [card('a'), card('d'), card('x'), card('x', { S: 1 })]);
      await store.finishPull(pull, [], T0);
      await store.applyDeliveries([delivered(card('e'))]);
      await store.applyWrites([card('0')], T1);
      expect(await ids(store)).toEqual(['c', 'b', 'a', 'd', 'x', 'e', '0']);
      expect(await store.card('x')).toEqual(card('x', { S: 1 }));
      const next = await store.beginPull(T1);
      await store.savePage(next, 0, [card('0'), card('e'), card('d'), card('c'), card('b'), card('a')]);
      expect(await ids(store)).toEqual(['x', '0', 'e', 'd', 'c', 'b', 'a']);
    });

    it('marks the cards it saw (pulledBy), and a card seen again is no longer missed', async () => {
      const s = await pgSchema();
      const store = await open(s);
      const first = await store.beginPull(T0);
      await store.savePage(first, 0, [card('a'), card('b')]);
      expect([await store.pulledBy(first, 'a'), await store.pulledBy(first, 'z')]).toEqual([true, false]);
      await store.finishPull(first, [], T0);
      const second = await store.beginPull(T1);
      expect(await store.pulledBy(second, 'a')).toBe(false);
      await store.savePage(second, 0, [card('a')]);
      await store.finishPull(second, [], T1);
      expect(await s.rows('SELECT _id, missed FROM cards ORDER BY _id')).toEqual([['a', 0], ['b', 1]]);
      await store.savePage(await store.beginPull(T1), 0, [card('b')]);
      expect(await s.rows("SELECT missed FROM cards WHERE _id = 'b'")).toEqual([[0]]);
    });
  });

  describe('a pull from beginning to end', () => {
    it('begins a new pull after a finished one, resumes an unfinished one in another connection, and abandons one', async () => {
      const s = await pgSchema();
      const store = await open(s);
      const first = await store.beginPull(T0);
      expect(first).toEqual({ id: 1, startedAt: T0, startSeq: 0, nextPage: 0, pages: 0, cards: 0, resumed: false });
      await store.savePage(first, 0, [card('a')]);
      await store.close();
      const again = await open(s);
      expect(await again.beginPull(T1)).toEqual({ id: 1, startedAt: T0, startSeq: 0, nextPage: 1, pages: 1, cards: 1, resumed: true });
      await again.finishPull(first, [], T1);
      await again.applyDeliveries([delivered(card('x'))]);
      const second = await again.beginPull(T1);
      expect(second).toEqual({ id: 2, startedAt: T1, startSeq: 1, nextPage: 0, pages: 0, cards: 0, resumed: false });
      await again.savePage(second, 0, [card('a')]);
      expect(await again.abandonPull()).toEqual({ ...second, nextPage: 1, pages: 1, cards: 1, resumed: true });
      expect(await again.abandonPull()).toBeUndefined();
      expect(await s.rows('SELECT _id, pulled FROM cards ORDER BY _id')).toEqual([['a', null], ['x', null]]);
      expect((await again.beginPull(T1)).id).toBe(2);
    });

    it('unseen: cards the pull has not seen and nothing touched since it began, with their misses; confirm', async () => {
      const s = await pgSchema();
      const store = await open(s);
      const first = await store.beginPull(T0);
      await store.savePage(first, 0, [card('a'), card('b'), card('c'), card('d', { S: 'Open' })]);
      await store.finishPull(first, [], T0);
      const second = await store.beginPull(T1);
      await store.savePage(second, 0, [card('a')]);
      await store.applyDeliveries([delivered(card('b', { S: 'x' }))]);
      await store.applyWrites([card('c', { S: 'y' })], T1);
      expect(await store.unseen(second)).toEqual([{ id: 'd', missed: 0 }]);
      await store.finishPull(second, [], T1);
      const third = await store.beginPull(T1);
      expect(await store.unseen(third)).toEqual([{ id: 'b', missed: 0 }, { id: 'c', missed: 0 }, { id: 'd', missed: 1 }, { id: 'a', missed: 0 }]);
      expect(await store.confirm(third, card('d', { S: 'Done' }))).toEqual({ id: 'd', before: card('d', { S: 'Open' }), after: card('d', { S: 'Done' }) });
      expect(await store.confirm(third, card('a'))).toBeUndefined();
      expect(await store.confirm(third, card('new'))).toEqual({ id: 'new', after: card('new') });
      expect(await s.rows("SELECT _id, missed FROM cards WHERE _id IN ('a', 'd', 'new') ORDER BY _id")).toEqual([['a', 0], ['d', 0], ['new', 0]]);
      expect(await store.pulledBy(third, 'd')).toBe(true);
    });

    it('finishPull deletes the cards gone, counts a miss for the other unseen, records the end, and forgets older deliveries and tombstones', async () => {
      const s = await pgSchema();
      const store = await open(s);
      await store.applyDeliveries([deleted('old'), { kind: 'comment', receivedAt: T0, cardId: 'a' }]);
      const pull = await store.beginPull(T0);
      await store.savePage(pull, 0, [card('a'), card('b'), card('c')]);
      await store.finishPull(pull, [], T0);
      const second = await store.beginPull(T1);
      await store.savePage(second, 0, [card('a')]);
      await store.applyDeliveries([deleted('z'), { kind: 'comment', receivedAt: T1, cardId: 'a' }]);
      expect(await store.finishPull(second, ['b', 'nothing', 'b'], T1)).toEqual([{ id: 'b', before: card('b') }]);
      expect(await s.rows('SELECT _id, missed FROM cards ORDER BY _id')).toEqual([['a', 0], ['c', 1]]);
      expect(await s.rows('SELECT id, finished_at, deleted FROM pulls ORDER BY id')).toEqual([[1, T0, 0], [2, T1, 1]]);
      expect(await s.rows('SELECT seq FROM deliveries ORDER BY seq')).toEqual([[3], [4]]);
      expect(await s.rows('SELECT _id, seq FROM tombstones')).toEqual([['z', 3]]);
    });
  });

  describe('applyDeliveries', () => {
    it('applies a batch in order as one delivery at a time would: twice the same card, a delete and a card made again, a field set to null', async () => {
      const s = await pgSchema();
      const store = await open(s);
      await store.savePage(await store.beginPull(T0), 0, [card('a', { S: 'Open', N: 1 }), card('b', { S: 'Open' }), card('gone', { S: 'Open' })]);
      await store.applyDeliveries([deleted('gone')]);
      const at = (c: ReturnType<typeof card>, receivedAt: string): MirrorDelivery => ({ kind: 'card', receivedAt, card: c });
      expect(
        await store.applyDeliveries([
          at(card('a', { S: 'Doing' }), T0),
          deleted('b'),
          at(card('n', { S: 'New' }), T0),
          at(card('a', { S: 'Done', N: null }), T1),
          at(card('b', { S: 'Back' }), T1),
          deleted('n'),
          at(card('gone', { S: 'Again' }), T1),
        ]),
      ).toEqual([
        { id: 'a', before: card('a', { S: 'Open', N: 1 }), after: card('a', { S: 'Doing', N: 1 }) },
        { id: 'b', before: card('b', { S: 'Open' }) },
        { id: 'n', after: card('n', { S: 'New' }) },
        { id: 'a', before: card('a', { S: 'Doing', N: 1 }), after: card('a', { S: 'Done', N: null }) },
        { id: 'b', after: card('b', { S: 'Back' }) },
        { id: 'n', before: card('n', { S: 'New' }) },
        { id: 'gone', after: card('gone', { S: 'Again' }) },
      ]);
      expect(await s.rows("SELECT body_text, body FROM cards WHERE _id = 'a'")).toEqual([['{"_id":"a","S":"Done","N":null}', { _id: 'a', S: 'Done', N: null }]]);
      expect(await s.rows('SELECT _id, pulled IS NULL, delivered_seq, updated_at FROM cards ORDER BY pos')).toEqual([
        ['a', false, 5, T1],
        ['b', true, 6, T1],
        ['gone', true, 8, T1],
      ]);
      expect(await s.rows('SELECT _id, seq FROM tombstones ORDER BY _id')).toEqual([['n', 7]]);
      expect(await s.rows('SELECT seq, kind, card_id FROM deliveries ORDER BY seq')).toEqual([
        [1, 'deleted', 'gone'],
        [2, 'card', 'a'],
        [3, 'deleted', 'b'],
        [4, 'card', 'n'],
        [5, 'card', 'a'],
        [6, 'card', 'b'],
        [7, 'deleted', 'n'],
        [8, 'card', 'gone'],
      ]);
      expect(await s.rows('SELECT seq FROM boards')).toEqual([[8]]);
    });

    it('deletes a card and leaves a tombstone; a card body after it brings the card back and clears the tombstone', async () => {
      const s = await pgSchema();
      const store = await open(s);
      await store.savePage(await store.beginPull(T0), 0, [card('a'), card('b')]);
      expect(await store.applyDeliveries([deleted('a'), deleted('b'), deleted('never')])).toEqual([
        { id: 'a', before: card('a') },
        { id: 'b', before: card('b') },
      ]);
      expect(await s.rows('SELECT _id, seq FROM tombstones ORDER BY _id')).toEqual([['a', 1], ['b', 2], ['never', 3]]);
      await store.applyDeliveries([delivered(card('a', { S: 'back' }))]);
      expect(await s.rows('SELECT _id FROM tombstones ORDER BY _id')).toEqual([['b'], ['never']]);
      expect(await ids(store)).toEqual(['a']);
    });

    it('takes ids and text of any kind as they are: quotes, backslashes, SQL, a NUL in an id, characters outside ASCII', async () => {
      const s = await pgSchema();
      const store = await open(s);
      const odd = ["it's", 'back\\slash\\', '"q"', "'); DELETE FROM cards; --", '$$x$$', 'e\u0301 😀', 'E\'\\n', 'nul\0id'];
      const cards = odd.map((id) => card(id, { [id]: `${id} ${id}`, t: "a'b\\c" }));
      expect(await store.applyDeliveries(cards.map(delivered))).toHaveLength(odd.length);
      expect(await store.applyDeliveries([delivered(card(odd[0]!, { S: 1 })), deleted(odd[1]!), { kind: 'unplaced', receivedAt: T0, body: odd.join('\n'), name: odd[3]!, cardId: odd[4]! }])).toHaveLength(2);
      for (const [i, id] of odd.entries()) expect(await store.card(id)).toEqual(i === 1 ? undefined : i === 0 ? { ...cards[0], S: 1 } : cards[i]);
      expect(await s.rows('SELECT _id FROM tombstones')).toEqual([[odd[1]]]);
      expect(await s.rows('SELECT name, card_id, body FROM deliveries WHERE kind = $1', ['unplaced'])).toEqual([[odd[3], odd[4], odd.join('\n').replace('\0', '\ufffd')]]);
      const pull = await store.beginPull(T1);
      expect(await store.savePage(pull, 0, cards.slice(2))).toEqual([]);
      expect(await store.pulledBy(pull, odd[7]!)).toBe(true);
      expect(await store.confirm(pull, cards[0]!)).toEqual({ id: odd[0], before: { ...cards[0], S: 1 }, after: cards[0] });
      expect(await store.finishPull(pull, [odd[3]!, odd[7]!], T1)).toEqual([{ id: odd[3], before: cards[3] }, { id: odd[7], before: cards[7] }]);
      expect(await ids(store)).toEqual([odd[0], odd[2], odd[4], odd[5], odd[6]]);
    });

    it('keeps a key named __proto__ as the card’s own data', async () => {
      const s = await pgSchema();
      const store = await open(s);
      const body = JSON.parse('{"_id":"p","__proto__":{"polluted":1}}') as ReturnType<typeof card>;
      await store.applyDeliveries([delivered(card('p', { S: 1 })), delivered(body)]);
      const kept = (await store.card('p'))!;
      expect(Object.keys(kept).sort()).toEqual(['S', '__proto__', '_id']);
      expect(Object.getPrototypeOf(kept)).toBe(Object.prototype);
    });

    it('logs comments and unplaced deliveries without touching a card; an unplaced body over 64 KiB is cut, and says so', async () => {
      const s = await pgSchema();
      const store = await open(s);
      await store.savePage(await store.beginPull(T0), 0, [card('a')]);
      const long = `${'x'.repeat(UNPLACED_BODY_MAX - 1)}é and more`;
      expect(
        await store.applyDeliveries([
          { kind: 'comment', receivedAt: T0, cardId: 'a', name: 'comment.created' },
          { kind: 'unplaced', receivedAt: T0, body: '{"odd":"\0"}', name: 'upload' },
          { kind: 'unplaced', receivedAt: T1, body: long, cardId: 'a' },
        ]),
      ).toEqual([]);
      expect(await store.card('a')).toEqual(card('a'));
      expect(await s.rows('SELECT seq, received_at, kind, name, card_id, octet_length(body), body_cut FROM deliveries ORDER BY seq')).toEqual([
        [1, T0, 'comment', 'comment.created', 'a', null, false],
        [2, T0, 'unplaced', 'upload', null, 13, false],
        [3, T1, 'unplaced', null, 'a', UNPLACED_BODY_MAX - 1, true],
      ]);
      expect(await s.rows('SELECT body FROM deliveries WHERE seq = 2')).toEqual([['{"odd":"\ufffd"}']]);
      expect((await store.status()).deliveries).toEqual({ applied: 3, unplaced: 2, lastAt: T1 });
    });

    it('applies a large batch whole, in order, and a batch that fails leaves none of it applied', async () => {
      const s = await pgSchema();
      const store = await open(s);
      const batch = Array.from({ length: 150 }, (_, i) => delivered(card(`c${String(i).padStart(3, '0')}`, { n: i })));
      expect(await store.applyDeliveries(batch)).toHaveLength(150);
      expect(await all(store, 1000)).toEqual(batch.map((d) => (d as Extract<MirrorDelivery, { kind: 'card' }>).card));
      await expect(store.applyDeliveries([delivered(card('z')), { kind: 'card', receivedAt: T0, card: { S: 'no id' } as never }])).rejects.toThrow(/without an _id/);
      expect(await store.count()).toBe(150);
      expect(await s.rows('SELECT count(*), min(seq), max(seq) FROM deliveries')).toEqual([[150, 1, 150]]);
    });

    it('keeps the card’s text exactly (key order, a 20-digit number, a NUL), and a jsonb body for SQL', async () => {
      const s = await pgSchema();
      const store = await open(s);
      const text = '{"_id":"k","z":1,"a":{"y":2,"b":3},"big":12345678901234567890,"nul":"a\\u0000b","half":"\\ud800"}';
      const kept = JSON.parse(text) as { _id: string; big: number };
      await store.applyDeliveries([delivered(kept)]);
      expect(await s.rows("SELECT body_text, body->>'nul', body->>'half', (body->>'big')::numeric = 12345678901234567000 FROM cards")).toEqual([
        [JSON.stringify(kept), 'a\ufffdb', '\ufffd', true],
      ]);
      expect(JSON.stringify(await store.card('k'))).toBe(JSON.stringify(kept));
      expect((await all(store)).map((c) => JSON.stringify(c))).toEqual([JSON.stringify(kept)]);
      expect((await store.card('k'))!.big).toBe(kept.big);
    });
  });

  describe('applyWrites, schema and the view, status and the listener', () => {
    it('applyWrites keeps the card whole, newer than any page of a pull begun before, and logs no delivery', async () => {
      const s = await pgSchema();
      const store = await open(s);
      await store.savePage(await store.beginPull(T0), 0, [card('a', { S: 'Open', T: 'title' })]);
      await store.finishPull(await store.beginPull(T0), [], T0);
      const running = await store.beginPull(T1);
      expect(await store.applyWrites([card('a', { S: 'Done' }), card('n')], T1)).toEqual([
        { id: 'a', before: card('a', { S: 'Open', T: 'title' }), after: card('a', { S: 'Done' }) },
        { id: 'n', after: card('n') },
      ]);
      expect(await store.savePage(running, 0, [card('a', { S: 'Open', T: 'title' })])).toEqual([]);
      expect(await store.card('a')).toEqual(card('a', { S: 'Done' }));
      expect((await store.status()).deliveries.applied).toBe(0);
    });

    it('has no schema before the first save, then the one saved (its keys in order); the per-board view follows it', async () => {
      const s = await pgSchema();
      const store = await open(s);
      const columns = async () => (await s.rows("SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'card_fields_1' ORDER BY ordinal_position", [s.schema])).map((r) => r[0]);
      expect(await store.schema()).toBeUndefined();
      expect(await columns()).toEqual(['_id']);
      await store.saveSchema([]);
      expect(await store.schema()).toEqual([]);
      const long = 'L'.repeat(70);
      const fields = [{ uuid: 'u1', name: 'Status', type: 'select' }, { name: 'Points', uuid: 'u2' }, { name: 'status', uuid: 'u3' }, { name: 'a\0b"c', uuid: 'u4' }, { name: `${long}1`, uuid: 'u5' }, { name: `${long}2`, uuid: 'u6' }];
      await store.saveSchema(fields);
      expect(JSON.stringify(await store.schema())).toBe(JSON.stringify(fields));
      await store.savePage(await store.beginPull(T0), 0, [card('a', { Status: 'Open', Points: 3, status: 'x', 'a\0b"c': 'odd', [`${long}2`]: 'two' })]);
      expect(await columns()).toEqual(['_id', 'Status', 'Points', 'status_2', 'a\ufffdb"c', 'L'.repeat(63), `${'L'.repeat(61)}_2`]);
      expect(await s.rows('SELECT * FROM card_fields_1')).toEqual([['a', 'Open', '3', 'x', 'odd', null, 'two']]);
      await store.saveSchema([fields[1]!]);
      expect(await s.rows('SELECT * FROM card_fields_1')).toEqual([['a', '3']]);
    });

    it('saves the same schema again without waiting for a reader of the view; a changed one makes the view again', async () => {
      const s = await pgSchema();
      const { store, clients } = await openKept(s);
      const fields = [{ name: 'S', uuid: 'u1' }, { name: 'n\0ul', uuid: 'u2' }];
      await store.saveSchema(fields);
      await store.applyDeliveries([delivered(card('a', { S: 'Open', 'n\0ul': 1 }))]);
      const reader = await pgClient();
      onTestFinished(() => reader.end());
      await reader.query(`BEGIN; SELECT * FROM ${s.schema}.card_fields_1`);
      await clients[0]!.query('SET lock_timeout = 200');
      await store.saveSchema([{ ...fields[0]!, type: 'select' }, fields[1]!]);
      await expect(store.saveSchema([fields[0]!])).rejects.toThrow('stayed busy');
      await reader.query('COMMIT');
      expect(await s.rows('SELECT * FROM card_fields_1')).toEqual([['a', 'Open', '1']]);
      await store.saveSchema([fields[0]!]);
      expect(await s.rows('SELECT * FROM card_fields_1')).toEqual([['a', 'Open']]);
      expect(await store.schema()).toEqual([fields[0]]);
    });

    it('status says the cards, the last complete pull, the open one, and the listener alive; a listener silent for a day is forgotten', async () => {
      const s = await pgSchema();
      const store = await open(s);
      expect(await store.status()).toEqual({ location: LOCATION, board: BOARD, cards: 0, deliveries: { applied: 0, unplaced: 0 } });
      const first = await store.beginPull(T0);
      await store.savePage(first, 0, [card('a'), card('b')]);
      await store.finishPull(first, ['b'], T1);
      const second = await store.beginPull(T1);
      await store.savePage(second, 0, [card('a')]);
      await store.listenerBeat('2030-01-01T09:00:00.000Z', '2030-01-01T10:00:00.000Z');
      await store.listenerBeat('2030-01-01T09:30:00.000Z', '2030-01-01T10:00:05.000Z');
      await store.listenerBeat('2030-01-01T08:00:00.000Z', '2030-01-01T09:00:00.000Z');
      expect(await store.status()).toEqual({
        location: LOCATION,
        board: BOARD,
        cards: 1,
        lastPull: { id: 1, startedAt: T0, finishedAt: T1, pages: 1, cards: 2, deleted: 1 },
        openPull: { id: 2, startedAt: T1, nextPage: 1, pages: 1, cards: 1 },
        deliveries: { applied: 0, unplaced: 0 },
        listener: { since: '2030-01-01T09:00:00.000Z', beatAt: '2030-01-01T10:00:00.000Z' },
      });
      await store.listenerGone('2030-01-01T09:00:00.000Z');
      expect((await store.status()).listener).toEqual({ since: '2030-01-01T09:30:00.000Z', beatAt: '2030-01-01T10:00:05.000Z' });
      await store.listenerGone('2030-01-01T09:30:00.000Z');
      expect((await store.status()).listener).toEqual({ since: '2030-01-01T08:00:00.000Z', beatAt: '2030-01-01T09:00:00.000Z' });
      await store.listenerGone('2030-01-01T08:00:00.000Z');
      expect((await store.status()).listener).toBeUndefined();
      await store.listenerBeat('2030-01-01T08:00:00.000Z', '2030-01-01T09:00:00.000Z');
      await store.listenerBeat('2030-01-02T08:00:00.000Z', '2030-01-02T08:59:59.000Z');
      expect(await s.rows('SELECT since FROM listener ORDER BY since')).toEqual([['2030-01-01T08:00:00.000Z'], ['2030-01-02T08:00:00.000Z']]);
      await store.listenerBeat('2030-01-02T08:00:00.000Z', '2030-01-02T09:00:01.000Z');
      expect(await s.rows('SELECT since FROM listener')).toEqual([['2030-01-02T08:00:00.000Z']]);
    });

    it('writes with commits that do not wait for the disk, and sync() commits one that does, leaving the session as it was', async () => {
      const s = await pgSchema();
      const { store, clients } = await openKept(s);
      const settings = async () => (await clients[0]!.query<{ s: string; l: string }>("SELECT current_setting('synchronous_commit') AS s, current_setting('lock_timeout') AS l")).rows[0];
      expect(await settings()).toEqual({ s: 'off', l: '30s' });
      await store.applyDeliveries([delivered(card('a'))]);
      await store.sync();
      expect(await settings()).toEqual({ s: 'off', l: '30s' });
      expect(await s.rows('SELECT seq FROM boards')).toEqual([[1]]);
    });
  });

  describe('opening', () => {
    it('keeps each board apart in one schema', async () => {
      const s = await pgSchema();
      const one = await open(s);
      const two = await open(s, { ...BOARD, id: 'board-2' });
      await one.applyDeliveries([delivered(card('a'))]);
      await two.applyDeliveries([delivered(card('b')), delivered(card('c'))]);
      expect([await one.count(), await two.count(), (await two.beginPull(T0)).startSeq]).toEqual([1, 2, 2]);
      expect(await ids(one)).toEqual(['a']);
      expect(await s.rows('SELECT board, board_id, seq FROM boards ORDER BY board')).toEqual([[1, 'board-1', 1], [2, 'board-2', 2]]);
    });

    it('refuses, with nothing made: a board not there when not creating, a newer format, another program’s tables', async () => {
      const s = await pgSchema();
      await expect(openPgStore(connector(s.url), BOARD, LOCATION, false)).rejects.toThrow(`No mirror of this board at ${LOCATION}.`);
      expect(await s.rows('SELECT count(*) FROM pg_tables WHERE schemaname = $1', [s.schema])).toEqual([[0]]);
      await (await open(s)).close();
      await expect(openPgStore(connector(s.url), { ...BOARD, id: 'other' }, LOCATION, false)).rejects.toThrow('No mirror of this board');
      await s.rows("UPDATE cardboard_mirror SET value = '2' WHERE key = 'format'");
      await expect(openPgStore(connector(s.url), BOARD, LOCATION, true)).rejects.toThrow(`The mirror ${LOCATION} is in format 2, newer than this cardboard reads (1); nothing was changed.`);
      const other = await pgSchema();
      await other.rows('CREATE TABLE cards (id int)');
      const refused = openPgStore(connector(other.url), BOARD, LOCATION, true);
      await expect(refused).rejects.toThrow(`The schema "${other.schema}" of ${LOCATION} holds tables named as a mirror's (cards) that are not one; nothing was changed.`);
      await expect(refused).rejects.toMatchObject({ exitCode: 2, hint: expect.stringContaining('options=-csearch_path=') });
      expect(await other.rows('SELECT count(*) FROM pg_tables WHERE schemaname = $1', [other.schema])).toEqual([[1]]);
    });

    it('two first opens at once both succeed, with one set of tables and one board row', async () => {
      const s = await pgSchema();
      const stores = await Promise.all([0, 1, 2, 3].map(() => openPgStore(connector(s.url), BOARD, LOCATION, true)));
      onTestFinished(async () => {
        await Promise.all(stores.map((o) => o.close()));
      });
      expect(await s.rows('SELECT board FROM boards')).toEqual([[1]]);
      await stores[0]!.applyDeliveries([delivered(card('a'))]);
      expect(await stores[3]!.card('a')).toEqual(card('a'));
    });

    it('a role that may only read opens the mirror without creating, and reads it', async () => {
      const s = await pgSchema();
      const store = await open(s);
      await store.applyDeliveries([delivered(card('a', { S: 1 }))]);
      await store.saveSchema([{ name: 'S', uuid: 'u' }]);
      const role = `r_${s.schema}`;
      const admin = await pgClient();
      try {
        await admin.query(`CREATE ROLE ${role} LOGIN; GRANT USAGE ON SCHEMA ${s.schema} TO ${role}; GRANT SELECT ON ALL TABLES IN SCHEMA ${s.schema} TO ${role}`);
      } finally {
        await admin.end();
      }
      onTestFinished(async () => {
        const c = await pgClient();
        try {
          await c.query(`DROP OWNED BY ${role}; DROP ROLE ${role}`);
        } finally {
          await c.end();
        }
      });
      const reader = await open(s, BOARD, false, role);
      expect(await reader.card('a')).toEqual(card('a', { S: 1 }));
      expect(await ids(reader)).toEqual(['a']);
      expect(await reader.schema()).toEqual([{ name: 'S', uuid: 'u' }]);
      expect((await reader.status()).cards).toBe(1);
      await expect(reader.applyDeliveries([delivered(card('b'))])).rejects.toThrow(/permission denied/);
      await expect(openPgStore(connector(s.url, role), { ...BOARD, id: 'other' }, LOCATION, false)).rejects.toThrow('No mirror of this board');
    });
  });

  describe('writers and readers at once', () => {
    it('two connections writing at once take turns on the board’s lock, and neither fails', async () => {
      const s = await pgSchema();
      const [one, two] = [await open(s), await open(s)];
      // Each store's calls go one at a time on its connection (as its thread makes them); the two connections race.
      const batches = async (store: PgStoreOps, prefix: string) => {
        for (let i = 0; i < 20; i++) await store.applyDeliveries([delivered(card(`${prefix}${i}`)), delivered(card('shared', { [prefix]: i }))]);
      };
      await Promise.all([batches(one, 'x'), batches(two, 'y')]);
      expect(await s.rows('SELECT count(*), max(seq) FROM deliveries')).toEqual([[80, 80]]);
      expect(await s.rows('SELECT seq FROM boards')).toEqual([[80]]);
      expect(await one.card('shared')).toEqual(card('shared', { x: 19, y: 19 }));
    });

    it('a write waits for the transaction holding the board’s lock, and goes on when it ends', async () => {
      const s = await pgSchema();
      const store = await open(s);
      const holder = await pgClient();
      onTestFinished(() => holder.end());
      await holder.query(`BEGIN; SELECT pg_advisory_xact_lock(1667394930, ${boardKey(s.schema, 1)})`);
      let done = false;
      const write = store.applyDeliveries([delivered(card('a'))]).then(() => (done = true));
      await new Promise((r) => setTimeout(r, 300));
      expect(done).toBe(false);
      await holder.query('COMMIT');
      await write;
      expect(await store.count()).toBe(1);
    });

    it('the board numbered 1 in another schema of the database has a lock of its own: its writer does not wait', async () => {
      const [s, other] = [await pgSchema(), await pgSchema()];
      const { store, clients } = await openKept(s);
      const otherStore = await open(other);
      expect([await s.rows('SELECT board FROM boards'), await other.rows('SELECT board FROM boards')]).toEqual([[[1]], [[1]]]);
      // A wait would fail the write at once rather than after the store's own 30 s.
      await clients[0]!.query('SET lock_timeout = 200');
      // The other schema's writer in the middle of a write: its board's lock taken, its read held up by a lock
      // on its cards.
      const holder = await pgClient();
      onTestFinished(() => holder.end());
      await holder.query(`BEGIN; LOCK TABLE ${other.schema}.cards IN ACCESS EXCLUSIVE MODE`);
      const otherWrite = otherStore.applyDeliveries([delivered(card('b'))]);
      await waitFor(async () => (await other.rows(`SELECT count(*) FROM pg_locks WHERE relation = '${other.schema}.cards'::regclass AND NOT granted`))[0]![0] !== '0', { what: 'the other writer to wait on its cards' });
      expect(await store.applyDeliveries([delivered(card('a'))])).toEqual([{ id: 'a', after: card('a') }]);
      await holder.query('COMMIT');
      expect(await otherWrite).toEqual([{ id: 'b', after: card('b') }]);
    });

    it('a write that waits for the board’s lock longer than lock_timeout fails as SQLite’s busy mirror does, and writes nothing', async () => {
      const s = await pgSchema();
      const { store, clients } = await openKept(s);
      // The store's own 30 s, made short for the test on its connection.
      await clients[0]!.query('SET lock_timeout = 200');
      const holder = await pgClient();
      onTestFinished(() => holder.end());
      await holder.query(`BEGIN; SELECT pg_advisory_xact_lock(1667394930, ${boardKey(s.schema, 1)})`);
      const refused = store.applyDeliveries([delivered(card('a')), deleted('b')]);
      await expect(refused).rejects.toThrow(`The mirror ${LOCATION} stayed busy for 30s: another process is writing to it.`);
      await expect(store.beginPull(T0)).rejects.toMatchObject({ exitCode: 1, hint: 'Run again when the other pull or import is done.' });
      await holder.query('COMMIT');
      expect([await store.count(), (await store.status()).deliveries.applied]).toEqual([0, 0]);
      expect(await store.applyDeliveries([delivered(card('a'))])).toEqual([{ id: 'a', after: card('a') }]);
    });

    it('a walk takes a new connection when the one kept from the last walk was closed by the server meanwhile', async () => {
      const s = await pgSchema();
      const { store, clients } = await openKept(s);
      await store.applyDeliveries([delivered(card('a'))]);
      expect(await ids(store)).toEqual(['a']);
      const admin = await pgClient();
      onTestFinished(() => admin.end());
      const pid = (clients[1] as unknown as { processID: number }).processID;
      await admin.query('SELECT pg_terminate_backend($1::int, 5000)', [pid]);
      expect(await ids(store)).toEqual(['a']);
      expect(clients).toHaveLength(3);
    });

    it('a write after the writer’s connection was lost takes a new one (the call that found it lost failed)', async () => {
      const s = await pgSchema();
      const { store, clients } = await openKept(s);
      await store.applyDeliveries([delivered(card('a'))]);
      const admin = await pgClient();
      onTestFinished(() => admin.end());
      const ended = new Promise((resolve) => clients[0]!.once('end', resolve));
      await admin.query('SELECT pg_terminate_backend($1::int, 5000)', [(clients[0] as unknown as { processID: number }).processID]);
      await ended;
      expect(await store.applyDeliveries([delivered(card('b'))])).toEqual([{ id: 'b', after: card('b') }]);
      expect([await store.count(), clients.length]).toEqual([2, 2]);
      expect(await clients[1]!.query('SHOW synchronous_commit')).toMatchObject({ rows: [{ synchronous_commit: 'off' }] });
    });

    it('a delivery committed while a pull walks is not undone by its later pages nor deleted by finishPull', async () => {
      const s = await pgSchema();
      const puller = await open(s);
      const listener = await open(s);
      const first = await puller.beginPull(T0);
      await puller.savePage(first, 0, [card('a', { S: 'Open' }), card('b', { S: 'Open' })]);
      await puller.finishPull(first, [], T0);
      const pull = await puller.beginPull(T1);
      await puller.savePage(pull, 0, [card('a', { S: 'Open' })]);
      await listener.applyDeliveries([delivered(card('b', { S: 'Done' })), delivered(card('n', { S: 'New' })), deleted('a')]);
      expect(await puller.savePage(pull, 1, [card('a', { S: 'Open' }), card('b', { S: 'Open' })])).toEqual([]);
      expect(await puller.unseen(pull)).toEqual([]);
      expect(await puller.finishPull(pull, [], T1)).toEqual([]);
      // b keeps the delivery's body, and the place its sighting on the later page gave it.
      expect(await all(puller)).toEqual([card('n', { S: 'New' }), card('b', { S: 'Done' })]);
    });

    it('a walk sees one snapshot while writes commit, and walks on their own connections do not disturb each other', async () => {
      const s = await pgSchema();
      const store = await open(s);
      await store.applyDeliveries([delivered(card('a')), delivered(card('b')), delivered(card('c'))]);
      const walk = await store.cardsOpen();
      expect(await store.cardsNext(walk, 1)).toEqual(['{"_id":"a"}']);
      await store.applyDeliveries([deleted('b'), delivered(card('d'))]);
      const inner = await store.cardsOpen();
      expect(await store.cardsNext(inner, 10)).toEqual(['{"_id":"a"}', '{"_id":"c"}', '{"_id":"d"}']);
      expect(await store.cardsNext(walk, 10)).toEqual(['{"_id":"b"}', '{"_id":"c"}']);
      expect(await store.cardsNext(walk, 10)).toEqual([]);
      const left = await store.cardsOpen();
      await store.cardsNext(left, 1);
      await store.cardsClose(left);
      await store.cardsClose(left);
      expect(await ids(store)).toEqual(['a', 'c', 'd']);
    });
  });
});
