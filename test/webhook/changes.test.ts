import { describe, expect, it } from 'vitest';
import { CardStates, type DeliveryChange } from '../../src/webhook/changes.js';
import { changeJsonTail, deliveryLine } from '../../src/commands/webhook/render.js';
import type { Delivery } from '../../src/webhook/delivery.js';
import { viewJson, withTail } from '../../src/webhook/delivery.js';
import { LARGE_BODY } from '../../src/webhook/large-lines.js';

const body = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v));

function delivery(v: unknown, seq = 1): Delivery {
  return { seq, receivedAt: '2026-11-26T03:04:05.678Z', method: 'POST', path: '/', headers: {}, body: body(v) };
}

describe('CardStates: what a delivery did to its card', () => {
  it('shows a card first seen as new with all its fields, then only the fields that changed', () => {
    const s = new CardStates();
    expect(s.apply(body({ _id: 'c1', Name: 'Fix login', Status: 'Open' }))).toEqual({
      event: 'new',
      cardId: 'c1',
      cardName: 'Fix login',
      changes: [
        { field: 'Name', after: 'Fix login' },
        { field: 'Status', after: 'Open' },
      ],
    });
    expect(s.apply(body({ _id: 'c1', Name: 'Fix login', Status: 'Done', Owner: 'Ada' }))).toEqual({
      event: 'changed',
      cardId: 'c1',
      cardName: 'Fix login',
      changes: [
        { field: 'Status', before: 'Open', after: 'Done' },
        { field: 'Owner', after: 'Ada' },
      ],
    });
    expect(s.apply(body({ _id: 'c1', Name: 'Fix login', Status: 'Done', Owner: 'Ada' }))).toEqual({ event: 'unchanged', cardId: 'c1', cardName: 'Fix login', changes: [] });
  });

  it("names a card by its first field holding a non-empty string, in the body's key order, `_` keys skipped", () => {
    const s = new CardStates();
    expect(s.apply(body({ _id: 'n1', _rev: 'r', Count: 3, Empty: '', Tags: ['a'], Title: 'Ship it', Name: 'later' })).cardName).toBe('Ship it');
    expect(s.apply(body({ _id: 'n2', Count: 3 }))).not.toHaveProperty('cardName');
    // A body holding only what changed keeps the name its card had; a new value of that field renames it.
    expect(s.apply(body({ _id: 'n1', Status: 'Done' })).cardName).toBe('Ship it');
    expect(s.apply(body({ _id: 'n1', Title: 'Renamed' })).cardName).toBe('Renamed');
    expect(s.apply(body({ event: 'card.updated', card: { _id: 'n3', Label: 'wrapped' } })).cardName).toBe('wrapped');
  });

  it('compares values deeply, and takes a missing field as not sent (a body may hold only what changed)', () => {
    const s = new CardStates();
    s.apply(body({ _id: 'c', Tags: ['a', 'b'], Meta: { x: 1 }, Status: 'Open' }));
    expect(s.apply(body({ _id: 'c', Tags: ['a', 'b'], Meta: { x: 1 } })).event).toBe('unchanged');
    expect(s.apply(body({ _id: 'c', Tags: ['a'] })).changes).toEqual([{ field: 'Tags', before: ['a', 'b'], after: ['a'] }]);
    // Status was not in the last two bodies: it is still known, so a change of it has its before.
    expect(s.apply(body({ _id: 'c', Status: 'Done' })).changes).toEqual([{ field: 'Status', before: 'Open', after: 'Done' }]);
    // null and "" are values, not absence.
    expect(s.apply(body({ _id: 'c', Status: null })).changes).toEqual([{ field: 'Status', before: 'Done', after: null }]);
    expect(s.apply(body({ _id: 'c', Status: '' })).changes).toEqual([{ field: 'Status', before: null, after: '' }]);
  });

  it('keeps field names that are Object.prototype members as plain fields', () => {
    const s = new CardStates();
    const first = '{"_id":"p","toString":"a","__proto__":"b","constructor":"c"}';
    expect(s.apply(body(first)).changes.map((c) => c.field)).toEqual(['toString', '__proto__', 'constructor']);
    const next = s.apply(body('{"_id":"p","toString":"a","__proto__":"B","constructor":"c"}'));
    expect(next).toEqual({ event: 'changed', cardId: 'p', cardName: 'a', changes: [{ field: '__proto__', before: 'b', after: 'B' }] });
    expect(Object.keys(s.get('p')!)).toEqual(['toString', '__proto__', 'constructor']);
    // A card id that is a prototype member is an ordinary id.
    expect(s.apply(body({ _id: 'constructor', A: 1 })).event).toBe('new');
    expect(s.apply(body({ _id: '__proto__', A: 1 })).event).toBe('new');
    expect(s.apply(body({ _id: '__proto__', A: 2 })).event).toBe('changed');
  });

  it('forgets the least recently seen card past the card limit, and past the byte limit', () => {
    const s = new CardStates({ maxCards: 3 });
    for (const id of ['a', 'b', 'c']) s.apply(body({ _id: id, N: 1 }));
    s.apply(body({ _id: 'a', N: 2 })); // a is now the most recent
    s.apply(body({ _id: 'd', N: 1 })); // b, the least recently seen, goes
    expect(s.size).toBe(3);
    expect(s.get('b')).toBeUndefined();
    expect(s.apply(body({ _id: 'a', N: 2 })).event).toBe('unchanged');
    expect(s.apply(body({ _id: 'b', N: 1 })).event).toBe('new');

    const card = (id: string) => body({ _id: id, Notes: 'x'.repeat(900) });
    const bytes = new CardStates({ maxBytes: 2 * card('a').length + 10 });
    for (const id of ['a', 'b', 'c']) bytes.apply(card(id));
    expect(bytes.size).toBe(2);
    expect(bytes.get('a')).toBeUndefined();
    // One card larger than the whole budget is still remembered (alone): the latest state is never dropped.
    const tiny = new CardStates({ maxBytes: 10 });
    tiny.apply(card('a'));
    tiny.apply(card('b'));
    expect([tiny.size, tiny.get('b') !== undefined]).toEqual([1, true]);
  });

  it('holds to its limits under many cards (bounded memory)', () => {
    const s = new CardStates({ maxCards: 100 });
    for (let i = 0; i < 10_000; i++) s.apply(body({ _id: `c${i}`, N: i }));
    expect(s.size).toBe(100);
    expect(s.get('c9999')).toEqual(Object.assign(Object.create(null), { N: 9999 }));
    expect(s.get('c9899')).toBeUndefined();
  });

  it('reads deletes and comments where a body says so, and forgets a deleted card', () => {
    const s = new CardStates();
    s.apply(body({ _id: 'c1', Status: 'Open' }));
    expect(s.apply(body({ event: 'card.deleted', card: { _id: 'c1' } }))).toEqual({ event: 'deleted', cardId: 'c1', name: 'card.deleted', changes: [] });
    expect(s.get('c1')).toBeUndefined();
    expect(s.apply(body({ _id: 'c2', deleted: true })).event).toBe('deleted');
    expect(s.apply(body({ type: 'remove', cardId: 'c3' }))).toEqual({ event: 'deleted', cardId: 'c3', name: 'remove', changes: [] });
    // A comment as spec 2.1 shows one, alone or wrapped.
    const comment = { id: 'm1', userId: 'u1', userName: 'Ada', content: 'Looks good', seenByUsers: [], createdAt: '2026-11-26T00:00:00.000Z' };
    expect(s.apply(body({ ...comment, cardId: 'c2' }))).toEqual({ event: 'comment', cardId: 'c2', changes: [], comment: { content: 'Looks good', author: 'Ada' } });
    expect(s.apply(body({ event: 'comment.created', cardId: 'c2', data: comment }))).toMatchObject({ event: 'comment', cardId: 'c2', name: 'comment.created' });
  });

  it('reads a card wrapped in an event, and never reads a card field as an event name', () => {
    const s = new CardStates();
    expect(s.apply(body({ event: 'card.updated', data: { _id: 'w', Status: 'Open' } }))).toMatchObject({ event: 'new', cardId: 'w', name: 'card.updated' });
    expect(s.apply(body({ type: 'card', payload: { _id: 'w', Status: 'Done' } }))).toMatchObject({ event: 'changed', cardId: 'w' });
    // A board may have fields named type, event or content: a body with an _id is a card, whatever its keys.
    expect(s.apply(body({ _id: 'f', type: 'delete request', event: 'comment', content: 'x', userName: 'Ada' }))).toMatchObject({ event: 'new', cardId: 'f' });
  });

  it('shows a body that is not a card as other, with its event name and card when it gives them', () => {
    const s = new CardStates();
    expect(s.apply(body([1, 2]))).toEqual({ event: 'other', changes: [] });
    expect(s.apply(body('not json'))).toEqual({ event: 'other', changes: [] });
    expect(s.apply(body({ hello: 'world' }))).toEqual({ event: 'other', changes: [] });
    expect(s.apply(body({ event: 'file.uploaded', cardId: 'c9', data: { fileName: 'a.png' } }))).toEqual({ event: 'other', cardId: 'c9', name: 'file.uploaded', changes: [] });
    expect(new CardStates({ maxBodyBytes: 10 }).apply(body({ _id: 'long', N: 1 }))).toEqual({ event: 'other', changes: [], unread: true });
  });
});

describe('CardStates.prime: a state known from elsewhere (the mirror)', () => {
  it('is what the next delivery is compared against, only for a card not remembered already', () => {
    const s = new CardStates();
    s.prime('c1', { _id: 'c1', Name: 'Fix login', Status: 'Open' });
    expect(s.apply(body({ _id: 'c1', Status: 'Done' }))).toEqual({ event: 'changed', cardId: 'c1', cardName: 'Fix login', changes: [{ field: 'Status', before: 'Open', after: 'Done' }] });
    // Remembered now: priming again with an older state changes nothing.
    s.prime('c1', { _id: 'c1', Status: 'Open' });
    expect(s.apply(body({ _id: 'c1', Status: 'Done' })).event).toBe('unchanged');
    expect(s.get('c1')).toEqual({ Name: 'Fix login', Status: 'Done' });
  });
});

describe('delivery lines and --json', () => {
  const states = new CardStates();
  const line = (v: unknown, seq = 1) => {
    const d = delivery(v, seq);
    return deliveryLine(d, states.apply(d.body));
  };

  it('shows a change as Field: before → after, — for no value', () => {
    expect(line({ _id: 'JShpBx', Status: 'Open', Title: 'Fix login' })).toBe('03:04:05.678  #1  POST /  card JShpBx  new card  Status=Open  Title=Fix login  52 B');
    expect(line({ _id: 'JShpBx', Status: 'Done', Title: 'Fix login', Owner: 'Ada' }, 2)).toBe('03:04:05.678  #2  POST /  card JShpBx  Status: Open → Done  Owner: — → Ada  66 B');
    expect(line({ _id: 'JShpBx', Status: '', Title: 'Fix login', Owner: 'Ada' }, 3)).toContain('card JShpBx  Status: Done → ""  ');
    expect(line({ _id: 'JShpBx', Status: '', Title: 'Fix login', Owner: 'Ada' }, 4)).toContain('card JShpBx  no change  ');
  });

  it('counts the changes past six on a line', () => {
    const many = (n: number) => Object.fromEntries([['_id', 'm'], ...Array.from({ length: 8 }, (_, i) => [`F${i}`, n])]);
    line(many(1));
    expect(line(many(2))).toContain('F5: 1 → 2  +2 more  ');
  });

  it('shows deletes, comments and other bodies as such, escaped', () => {
    expect(line({ event: 'card.deleted', card: { _id: 'JShpBx' } })).toContain('  card JShpBx deleted (card.deleted)  ');
    expect(line({ cardId: 'c1', userName: 'Ada\u001b[2J', content: 'first line\nsecond' })).toContain('  comment on card c1 by Ada\\e[2J: "first line\\nsecond"  ');
    expect(line({ event: 'upload', cardId: 'c1' })).toContain('  upload on card c1  ');
    expect(line({ a: 1 })).toContain('  object  a=1  ');
    expect(line('plain')).toContain('  text "plain"  ');
  });

  it('puts change, cardId and changes after the body in --json, before absent for a field not seen before', () => {
    const s = new CardStates();
    const d1 = delivery({ _id: 'c1', Status: 'Open' });
    const v1 = JSON.parse(viewJson(d1, changeJsonTail(s.apply(d1.body))));
    expect(v1).toMatchObject({ seq: 1, body: { _id: 'c1', Status: 'Open' }, change: 'new', cardId: 'c1', changes: [{ field: 'Status', after: 'Open' }] });
    expect(Object.keys(v1.changes[0])).toEqual(['field', 'after']);
    const d2 = delivery({ _id: 'c1', Status: 'Done' }, 2);
    const tail = changeJsonTail(s.apply(d2.body));
    // The line made while recording and the line made for printing agree.
    expect(withTail(viewJson(d2), tail)).toBe(viewJson(d2, tail));
    expect(JSON.parse(viewJson(d2, tail))).toMatchObject({ change: 'changed', changes: [{ field: 'Status', before: 'Open', after: 'Done' }] });
    const other: DeliveryChange = { event: 'other', changes: [] };
    expect(JSON.parse(viewJson(delivery('x'), changeJsonTail(other)))).toMatchObject({ body: 'x', change: 'other', changes: [] });
    // A large body is written in pieces; the tail still comes after it.
    const big = delivery({ _id: 'big', Notes: 'n'.repeat(LARGE_BODY) });
    expect(JSON.parse(viewJson(big, changeJsonTail(s.apply(big.body))))).toMatchObject({ change: 'new', cardId: 'big' });
  });
});

describe('readHistory: the cards known from a record file', () => {
  it('reads only the end of a large file, from the first whole line, oldest first', async () => {
    const { writeFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { tempDir } = await import('../helpers/cli.js');
    const { toRecordLine } = await import('../../src/webhook/delivery.js');
    const { readHistory } = await import('../../src/webhook/history.js');
    const file = join(tempDir(), 'hooks.jsonl');
    const lines = [1, 2, 3, 4].map((seq) => toRecordLine(delivery({ _id: `c${seq}`, Status: `s${seq}`, Pad: 'p'.repeat(200) }, seq)));
    writeFileSync(file, lines.join(''));
    // The last 10 bytes of line 3 and line 4: lines 1-3 are not read, line 4 is.
    const seen: number[] = [];
    const states = new CardStates();
    expect(readHistory(file, states, (d) => seen.push(d.seq), lines[3]!.length + 10)).toBe(1);
    expect(seen).toEqual([4]);
    expect([states.get('c3'), states.get('c4')?.Status]).toEqual([undefined, 's4']);
    // A tail that starts exactly at a line's start keeps that line.
    const exact: number[] = [];
    readHistory(file, new CardStates(), (d) => exact.push(d.seq), lines[3]!.length + lines[2]!.length);
    expect(exact).toEqual([3, 4]);
    // The whole file, and a missing one.
    expect(readHistory(file, new CardStates())).toBe(4);
    expect(readHistory(join(tempDir(), 'none.jsonl'), new CardStates())).toBe(0);
  });
});
