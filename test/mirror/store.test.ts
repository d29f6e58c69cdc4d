// The store of a board's mirror, rule by rule on each engine (SQLite, src/mirror/sqlite-store.ts, and
// PostgreSQL), each checked through the interface and, where the rule is about what the database holds, with a
// connection of the test's own; the SQLite file's own rules at the end.
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UNPLACED_BODY_MAX } from '../../src/mirror/card-run.js';
import type { MirrorDelivery } from '../../src/mirror/types.js';
import { tempDir } from '../helpers/cli.js';
import { absent, ENGINES, SQLITE } from '../helpers/engines.js';
import { BOARD, newMirror, rowsOf } from './helpers.js';

const T0 = '2030-01-01T10:00:00.000Z';
const T1 = '2030-01-01T10:05:00.000Z';
const card = (id: string, fields: Record<string, unknown> = {}) => ({ _id: id, ...fields });
const delivered = (c: ReturnType<typeof card>): MirrorDelivery => ({ kind: 'card', receivedAt: T0, card: c });
const deleted = (id: string): MirrorDelivery => ({ kind: 'deleted', receivedAt: T0, id });
const ids = (store: { cards(): Iterable<{ _id: string }> }) => [...store.cards()].map((c) => c._id);

// The card_fields view's columns, and its rows (on PostgreSQL the view of the schema's first board).
const COLUMNS = {
  sqlite: "SELECT name FROM pragma_table_info('card_fields')",
  postgres: "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'card_fields_1' ORDER BY ordinal_position",
};
const FIELDS = { sqlite: 'SELECT * FROM card_fields', postgres: 'SELECT * FROM card_fields_1' };

describe.each(ENGINES)('the mirror store ($name)', (engine) => {
  if (absent(engine)) return;

  describe('savePage', () => {
    it('returns new and changed cards, and nothing for a card the page repeats unchanged (bodies compared parsed)', async () => {
      const env = await engine.env();
      const store = newMirror(env);
      const pull = store.beginPull(T0);
      expect(store.savePage(pull, 0, [card('a', { S: 'Open', N: { x: 1, y: 2 } }), card('b')])).toEqual([
        { id: 'a', after: card('a', { S: 'Open', N: { x: 1, y: 2 } }) },
        { id: 'b', after: card('b') },
      ]);
      // The same card with its keys in another order is the same card.
      expect(store.savePage(pull, 1, [{ N: { y: 2, x: 1 }, S: 'Open', _id: 'a' }, card('b', { S: 'Done' })])).toEqual([
        { id: 'b', before: card('b'), after: card('b', { S: 'Done' }) },
      ]);
      expect(store.card('b')).toEqual(card('b', { S: 'Done' }));
      expect(store.count()).toBe(2);
    });

    it('advances the cursor and the pull row: next page past the page saved, pages, and cards counted twice when repeated', async () => {
      const env = await engine.env();
      const store = newMirror(env);
      const pull = store.beginPull(T0);
      store.savePage(pull, 0, [card('a'), card('b')]);
      store.savePage(pull, 1, [card('b'), card('c')]);
      expect(pull).toMatchObject({ nextPage: 2, pages: 2, cards: 4 });
      expect(await engine.rows(env, 'SELECT next_page, pages, cards FROM pulls')).toEqual([[2, 2, 4]]);
    });

    it('keeps what a delivery said after the pull began: a page does not bring back a card it deleted, nor undo its change', async () => {
      const env = await engine.env();
      const store = newMirror(env);
      store.savePage(store.beginPull(T0), 0, [card('a', { S: 'Open' }), card('b', { S: 'Open' })]);
      const pull = store.beginPull(T0); // the first pull is still open: the same pull, resumed
      store.finishPull(pull, [], T0);
      const second = store.beginPull(T1);
      store.applyDeliveries([deleted('a'), delivered(card('b', { S: 'Done' }))]);
      expect(store.savePage(second, 0, [card('a', { S: 'Open' }), card('b', { S: 'Open' })])).toEqual([]);
      expect(store.card('a')).toBeUndefined();
      expect(store.card('b')).toEqual(card('b', { S: 'Done' }));
    });

    it('takes the page over a delivery applied before the pull began (the page is the newer)', async () => {
      const env = await engine.env();
      const store = newMirror(env);
      store.applyDeliveries([delivered(card('a', { S: 'Open' })), deleted('b')]);
      const pull = store.beginPull(T1);
      expect(store.savePage(pull, 0, [card('a', { S: 'Done' }), card('b')])).toEqual([
        { id: 'a', before: card('a', { S: 'Open' }), after: card('a', { S: 'Done' }) },
        { id: 'b', after: card('b') },
      ]);
      expect(store.count()).toBe(2);
    });

    it('keeps board order: the order the pull read cards in, a later sighting moving a card, cards delivered since at the end', async () => {
      const env = await engine.env();
      const store = newMirror(env);
      const pull = store.beginPull(T0);
      store.savePage(pull, 0, [card('c'), card('a'), card('b')]);
      store.savePage(pull, 1, [card('a'), card('d')]); // the board shifted: a moved down
      store.finishPull(pull, [], T0);
      store.applyDeliveries([delivered(card('e'))]);
      store.applyWrites([card('0')], T1);
      expect(ids(store)).toEqual(['c', 'b', 'a', 'd', 'e', '0']);
      const next = store.beginPull(T1);
      store.savePage(next, 0, [card('0'), card('e'), card('d'), card('c'), card('b'), card('a')]);
      expect(ids(store)).toEqual(['0', 'e', 'd', 'c', 'b', 'a']);
    });

    it('marks the cards it saw (pulledBy), and a card seen again is no longer missed', async () => {
      const env = await engine.env();
      const store = newMirror(env);
      const first = store.beginPull(T0);
      store.savePage(first, 0, [card('a'), card('b')]);
      expect([store.pulledBy(first, 'a'), store.pulledBy(first, 'z')]).toEqual([true, false]);
      store.finishPull(first, [], T0);
      const second = store.beginPull(T1);
      expect(store.pulledBy(second, 'a')).toBe(false);
      store.savePage(second, 0, [card('a')]);
      store.finishPull(second, [], T1);
      expect(await engine.rows(env, 'SELECT _id, missed FROM cards ORDER BY _id')).toEqual([['a', 0], ['b', 1]]);
      const third = store.beginPull(T1);
      store.savePage(third, 0, [card('b')]);
      expect(await engine.rows(env, "SELECT missed FROM cards WHERE _id = 'b'")).toEqual([[0]]);
    });
  });

  describe('cards', () => {
    it('walks the cards in board order, each walk on its own: one inside another, or one left unfinished, does not disturb it', async () => {
      const env = await engine.env();
      const store = newMirror(env);
      store.savePage(store.beginPull(T0), 0, [card('a'), card('b')]);
      const left = store.cards()[Symbol.iterator]();
      expect(left.next().value).toEqual(card('a'));
      const pairs = [...store.cards()].flatMap((outer) => [...store.cards()].map((inner) => `${outer._id}${inner._id}`));
      expect(pairs).toEqual(['aa', 'ab', 'ba', 'bb']);
      expect(left.next().value).toEqual(card('b'));
    });
  });

  describe('a pull from beginning to end', () => {
    it('begins a new pull after a finished one, and resumes an unfinished one where it stopped, in another process too', async () => {
      const env = await engine.env();
      const store = newMirror(env);
      const first = store.beginPull(T0);
      expect(first).toEqual({ id: 1, startedAt: T0, startSeq: 0, nextPage: 0, pages: 0, cards: 0, resumed: false });
      store.savePage(first, 0, [card('a')]);
      store.close();
      const again = newMirror(env);
      expect(again.beginPull(T1)).toEqual({ id: 1, startedAt: T0, startSeq: 0, nextPage: 1, pages: 1, cards: 1, resumed: true });
      again.finishPull(first, [], T1);
      again.applyDeliveries([delivered(card('x'))]);
      expect(again.beginPull(T1)).toEqual({ id: 2, startedAt: T1, startSeq: 1, nextPage: 0, pages: 0, cards: 0, resumed: false });
    });

    it('unseen: cards the pull has not seen and nothing touched since it began, with their misses', async () => {
      const env = await engine.env();
      const store = newMirror(env);
      const first = store.beginPull(T0);
      store.savePage(first, 0, [card('a'), card('b'), card('c'), card('d')]);
      store.finishPull(first, [], T0);
      const second = store.beginPull(T1);
      store.savePage(second, 0, [card('a')]);
      store.applyDeliveries([delivered(card('b', { S: 'x' }))]);
      store.applyWrites([card('c', { S: 'y' })], T1);
      expect(store.unseen(second)).toEqual([{ id: 'd', missed: 0 }]);
      store.finishPull(second, [], T1);
      const third = store.beginPull(T1);
      expect(store.unseen(third)).toEqual([{ id: 'b', missed: 0 }, { id: 'c', missed: 0 }, { id: 'd', missed: 1 }, { id: 'a', missed: 0 }]);
    });

    it('confirm keeps the card as read and counts it seen by the pull', async () => {
      const env = await engine.env();
      const store = newMirror(env);
      const first = store.beginPull(T0);
      store.savePage(first, 0, [card('a', { S: 'Open' }), card('b')]);
      store.finishPull(first, [], T0);
      const second = store.beginPull(T1);
      expect(store.confirm(second, card('a', { S: 'Done' }))).toEqual({ id: 'a', before: card('a', { S: 'Open' }), after: card('a', { S: 'Done' }) });
      expect(store.confirm(second, card('b'))).toBeUndefined();
      expect(store.unseen(second)).toEqual([]);
      expect(store.pulledBy(second, 'a')).toBe(true);
    });

    it('finishPull deletes the cards gone, counts a miss for the other unseen, records the end, and forgets deliveries and tombstones older than the pull', async () => {
      const env = await engine.env();
      const store = newMirror(env);
      store.applyDeliveries([deleted('old'), { kind: 'comment', receivedAt: T0, cardId: 'a' }]);
      const pull = store.beginPull(T0);
      store.savePage(pull, 0, [card('a'), card('b'), card('c')]);
      store.finishPull(pull, [], T0);
      const second = store.beginPull(T1);
      store.savePage(second, 0, [card('a')]);
      store.applyDeliveries([deleted('z'), { kind: 'comment', receivedAt: T1, cardId: 'a' }]);
      expect(store.finishPull(second, ['b', 'nothing'], T1)).toEqual([{ id: 'b', before: card('b') }]);
      expect(await engine.rows(env, 'SELECT _id, missed FROM cards ORDER BY _id')).toEqual([['a', 0], ['c', 1]]);
      expect(await engine.rows(env, 'SELECT id, finished_at, deleted FROM pulls ORDER BY id')).toEqual([[1, T0, 0], [2, T1, 1]]);
      // Deliveries 1-2 came before the second pull began (start_seq 2): forgotten; 3-4 came during it: kept.
      expect(await engine.rows(env, 'SELECT seq FROM deliveries ORDER BY seq')).toEqual([[3], [4]]);
      expect(await engine.rows(env, 'SELECT _id, seq FROM tombstones')).toEqual([['z', 3]]);
    });
  });

  describe('applyDeliveries', () => {
    it('merges a card body into the card kept, makes a card it does not know, and says what changed', async () => {
      const env = await engine.env();
      const store = newMirror(env);
      store.savePage(store.beginPull(T0), 0, [card('a', { S: 'Open', T: 'title' })]);
      expect(store.applyDeliveries([delivered(card('a', { S: 'Done' })), delivered(card('n', { S: 'New' })), delivered(card('a', { S: 'Done' }))])).toEqual([
        { id: 'a', before: card('a', { S: 'Open', T: 'title' }), after: card('a', { S: 'Done', T: 'title' }) },
        { id: 'n', after: card('n', { S: 'New' }) },
      ]);
      expect(store.card('a')).toEqual(card('a', { S: 'Done', T: 'title' }));
    });

    it('keeps a key named __proto__ as the card’s own data', async () => {
      const env = await engine.env();
      const store = newMirror(env);
      const body = JSON.parse('{"_id":"p","__proto__":{"polluted":1}}') as ReturnType<typeof card>;
      store.applyDeliveries([delivered(card('p', { S: 1 })), delivered(body)]);
      const kept = store.card('p')!;
      expect(Object.keys(kept).sort()).toEqual(['S', '__proto__', '_id']);
      expect(Object.getPrototypeOf(kept)).toBe(Object.prototype);
    });

    it('deletes a card and leaves a tombstone; a card body after it brings the card back and clears the tombstone', async () => {
      const env = await engine.env();
      const store = newMirror(env);
      store.savePage(store.beginPull(T0), 0, [card('a'), card('b')]);
      expect(store.applyDeliveries([deleted('a'), deleted('b'), deleted('never')])).toEqual([
        { id: 'a', before: card('a') },
        { id: 'b', before: card('b') },
      ]);
      expect(await engine.rows(env, 'SELECT _id, seq FROM tombstones ORDER BY _id')).toEqual([['a', 1], ['b', 2], ['never', 3]]);
      store.applyDeliveries([delivered(card('a', { S: 'back' }))]);
      expect(await engine.rows(env, 'SELECT _id FROM tombstones ORDER BY _id')).toEqual([['b'], ['never']]);
      expect(ids(store)).toEqual(['a']);
    });

    it('logs comments and unplaced deliveries without touching a card; an unplaced body over 64 KiB is cut, and says so', async () => {
      const env = await engine.env();
      const store = newMirror(env);
      store.savePage(store.beginPull(T0), 0, [card('a')]);
      const long = `${'x'.repeat(UNPLACED_BODY_MAX - 1)}é and more`;
      expect(store.applyDeliveries([
        { kind: 'comment', receivedAt: T0, cardId: 'a', name: 'comment.created' },
        { kind: 'unplaced', receivedAt: T0, body: '{"odd":true}', name: 'upload' },
        { kind: 'unplaced', receivedAt: T1, body: long, cardId: 'a' },
      ])).toEqual([]);
      expect(store.card('a')).toEqual(card('a'));
      const rows = await engine.rows(env, {
        sqlite: 'SELECT seq, received_at, kind, name, card_id, length(CAST(body AS BLOB)), body_cut FROM deliveries ORDER BY seq',
        postgres: 'SELECT seq, received_at, kind, name, card_id, octet_length(body), body_cut FROM deliveries ORDER BY seq',
      });
      // The cut falls before the two-byte é that would cross the limit.
      expect(rows).toEqual([
        [1, T0, 'comment', 'comment.created', 'a', null, 0],
        [2, T0, 'unplaced', 'upload', null, 12, 0],
        [3, T1, 'unplaced', null, 'a', UNPLACED_BODY_MAX - 1, 1],
      ]);
      expect(store.status().deliveries).toEqual({ applied: 3, unplaced: 2, lastAt: T1 });
    });

    it('applies a batch in order as one delivery at a time would: twice the same card, a delete and a card made again, a field set to null', async () => {
      const env = await engine.env();
      const store = newMirror(env);
      store.savePage(store.beginPull(T0), 0, [card('a', { S: 'Open', N: 1 }), card('b', { S: 'Open' }), card('gone', { S: 'Open' })]);
      store.applyDeliveries([deleted('gone')]);
      const at = (c: ReturnType<typeof card>, receivedAt: string): MirrorDelivery => ({ kind: 'card', receivedAt, card: c });
      expect(
        store.applyDeliveries([
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
        // A field the service set to null stays, null: it is not a field left out.
        { id: 'a', before: card('a', { S: 'Doing', N: 1 }), after: card('a', { S: 'Done', N: null }) },
        { id: 'b', after: card('b', { S: 'Back' }) },
        { id: 'n', before: card('n', { S: 'New' }) },
        { id: 'gone', after: card('gone', { S: 'Again' }) },
      ]);
      expect(await engine.rows(env, { sqlite: "SELECT body FROM cards WHERE _id = 'a'", postgres: "SELECT body_text FROM cards WHERE _id = 'a'" })).toEqual([['{"_id":"a","S":"Done","N":null}']]);
      // A card kept keeps its place; one deleted and made again goes to the end, in the order made; each row
      // says the last delivery that made it, and when.
      expect(await engine.rows(env, 'SELECT _id, pulled IS NULL, delivered_seq, updated_at FROM cards ORDER BY pos')).toEqual([
        ['a', 0, 5, T1],
        ['b', 1, 6, T1],
        ['gone', 1, 8, T1],
      ]);
      expect(await engine.rows(env, 'SELECT _id, seq FROM tombstones ORDER BY _id')).toEqual([['n', 7]]);
      expect(await engine.rows(env, 'SELECT seq, kind, card_id FROM deliveries ORDER BY seq')).toEqual([
        [1, 'deleted', 'gone'],
        [2, 'card', 'a'],
        [3, 'deleted', 'b'],
        [4, 'card', 'n'],
        [5, 'card', 'a'],
        [6, 'card', 'b'],
        [7, 'deleted', 'n'],
        [8, 'card', 'gone'],
      ]);
      expect(await engine.rows(env, { sqlite: "SELECT value FROM meta WHERE key = 'seq'", postgres: 'SELECT CAST(seq AS text) FROM boards' })).toEqual([['8']]);
    });

    it('applies a batch larger than one statement takes (64 rows) whole, in order', async () => {
      const env = await engine.env();
      const store = newMirror(env);
      const batch = Array.from({ length: 150 }, (_, i) => delivered(card(`c${String(i).padStart(3, '0')}`, { n: i })));
      expect(store.applyDeliveries(batch)).toHaveLength(150);
      expect([...store.cards()]).toEqual(batch.map((d) => (d as Extract<MirrorDelivery, { kind: 'card' }>).card));
      expect(await engine.rows(env, 'SELECT count(*), min(seq), max(seq) FROM deliveries')).toEqual([[150, 1, 150]]);
    });

    it('applies a batch in one transaction: a delivery that fails leaves none of the batch applied', async () => {
      const env = await engine.env();
      const store = newMirror(env);
      expect(() => store.applyDeliveries([delivered(card('a')), { kind: 'card', receivedAt: T0, card: { S: 'no id' } as never }])).toThrow(/without an _id/);
      expect(store.count()).toBe(0);
      expect(store.status().deliveries.applied).toBe(0);
      expect(store.beginPull(T0).startSeq).toBe(0);
    });
  });

  describe('applyWrites', () => {
    it('keeps the card whole, newer than any page of a pull begun before, and logs no delivery', async () => {
      const env = await engine.env();
      const store = newMirror(env);
      store.savePage(store.beginPull(T0), 0, [card('a', { S: 'Open', T: 'title' })]);
      const pull = store.beginPull(T0);
      store.finishPull(pull, [], T0);
      const running = store.beginPull(T1);
      expect(store.applyWrites([card('a', { S: 'Done' }), card('n')], T1)).toEqual([
        { id: 'a', before: card('a', { S: 'Open', T: 'title' }), after: card('a', { S: 'Done' }) },
        { id: 'n', after: card('n') },
      ]);
      expect(store.savePage(running, 0, [card('a', { S: 'Open', T: 'title' })])).toEqual([]);
      expect(store.card('a')).toEqual(card('a', { S: 'Done' }));
      expect(store.status().deliveries.applied).toBe(0);
    });
  });

  describe('schema and the card_fields view', () => {
    it('has no schema before the first save, then the one saved; the view follows it', async () => {
      const env = await engine.env();
      const store = newMirror(env);
      expect(store.schema()).toBeUndefined();
      expect(await engine.rows(env, COLUMNS)).toEqual([['_id']]);
      store.saveSchema([]);
      expect(store.schema()).toEqual([]);
      const fields = [{ name: 'Status', uuid: 'u1', type: 'select' }, { name: 'Points', uuid: 'u2' }];
      store.saveSchema(fields);
      expect(store.schema()).toEqual(fields);
      store.savePage(store.beginPull(T0), 0, [card('a', { Status: 'Open', Points: 3 })]);
      // PostgreSQL's view gives each field as text (body->>'Field').
      expect(await engine.rows(env, FIELDS)).toEqual([['a', 'Open', engine.name === 'sqlite' ? 3 : '3']]);
      expect(await engine.rows(env, COLUMNS)).toEqual([['_id'], ['Status'], ['Points']]);
      store.saveSchema([fields[1]!]);
      expect(await engine.rows(env, FIELDS)).toEqual([['a', engine.name === 'sqlite' ? 3 : '3']]);
    });
  });

  describe('status and the listener', () => {
    it('says where the mirror is, its cards, its last complete pull, the open one, and the listener alive', async () => {
      const env = await engine.env();
      const store = newMirror(env);
      expect(store.status()).toEqual({ location: env.CARDBOARD_MIRROR, board: BOARD, cards: 0, deliveries: { applied: 0, unplaced: 0 } });
      const first = store.beginPull(T0);
      store.savePage(first, 0, [card('a'), card('b')]);
      store.finishPull(first, ['b'], T1);
      const second = store.beginPull(T1);
      store.savePage(second, 0, [card('a')]);
      store.listenerBeat('2030-01-01T09:00:00.000Z', '2030-01-01T10:00:00.000Z');
      store.listenerBeat('2030-01-01T09:30:00.000Z', '2030-01-01T10:00:05.000Z');
      store.listenerBeat('2030-01-01T08:00:00.000Z', '2030-01-01T09:00:00.000Z'); // long gone
      expect(store.status()).toEqual({
        location: env.CARDBOARD_MIRROR,
        board: BOARD,
        cards: 1,
        lastPull: { id: 1, startedAt: T0, finishedAt: T1, pages: 1, cards: 2, deleted: 1 },
        openPull: { id: 2, startedAt: T1, nextPage: 1, pages: 1, cards: 1 },
        deliveries: { applied: 0, unplaced: 0 },
        listener: { since: '2030-01-01T09:00:00.000Z', beatAt: '2030-01-01T10:00:00.000Z' },
      });
      store.listenerGone('2030-01-01T09:00:00.000Z');
      expect(store.status().listener).toEqual({ since: '2030-01-01T09:30:00.000Z', beatAt: '2030-01-01T10:00:05.000Z' });
      store.listenerGone('2030-01-01T09:30:00.000Z');
      store.listenerGone('2030-01-01T08:00:00.000Z');
      expect(store.status().listener).toBeUndefined();
    });

    it('forgets a listener silent for a day (killed before it could say it stopped) at the next beat', async () => {
      const env = await engine.env();
      const store = newMirror(env);
      store.listenerBeat('2030-01-01T08:00:00.000Z', '2030-01-01T09:00:00.000Z');
      store.listenerBeat('2030-01-02T08:00:00.000Z', '2030-01-02T08:59:59.000Z');
      expect(await engine.rows(env, 'SELECT since FROM listener ORDER BY since')).toEqual([['2030-01-01T08:00:00.000Z'], ['2030-01-02T08:00:00.000Z']]);
      store.listenerBeat('2030-01-02T08:00:00.000Z', '2030-01-02T09:00:01.000Z');
      expect(await engine.rows(env, 'SELECT since FROM listener')).toEqual([['2030-01-02T08:00:00.000Z']]);
    });
  });
});

// The file itself: SQLite only.
describe('sync (SQLite)', () => {
  it('brings what was applied into the database file itself, so that it needs no WAL to be read', async () => {
    const env = await SQLITE.env();
    const store = newMirror(env);
    store.sync();
    store.applyDeliveries([delivered(card('a', { S: 'Open' }))]);
    // The file alone, as the disk holds it once synced: without its -wal, which a commit alone writes to.
    const copy = join(tempDir('cardboard-mirror-copy-'), 'copy.db');
    copyFileSync(env.CARDBOARD_MIRROR, copy);
    expect(rowsOf(copy, 'SELECT count(*) FROM cards')).toEqual([[0]]);
    store.sync();
    copyFileSync(env.CARDBOARD_MIRROR, copy);
    expect(rowsOf(copy, 'SELECT body FROM cards')).toEqual([['{"_id":"a","S":"Open"}']]);
  });
});
