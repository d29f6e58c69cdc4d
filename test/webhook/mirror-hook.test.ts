// `webhook listen --mirror` in process: each delivery read as the change lines read it and placed in the
// mirror (a card, a delete, a comment, or unplaced, never guessed), one applyDeliveries per batch before the
// 200s (a throw answers them 500), change lines against what the mirror held, the listener's beat on the
// engine's clock, and the mirror closed last. The store here is a small stand-in in memory; the e2e tests
// (mirror-listen.e2e.test.ts) run the real one.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Clock } from '../../src/clock.js';
import { realClock } from '../../src/clock.js';
import { childStop } from '../../src/interrupt.js';
import { LISTENER_BEAT_MS, type MirrorChange, type MirrorDelivery, type MirrorStore } from '../../src/mirror/types.js';
import type { Card } from '../../src/spec-types.js';
import { ListenEngine, type ListenEvent, type ListenPlan } from '../../src/webhook/listen-engine.js';
import { placeDelivery } from '../../src/webhook/mirror-hook.js';
import { tempDir } from '../helpers/cli.js';
import { post } from './helpers.js';

const KEY = 'whsec-mirror-hook-key-0123456789';
const TOKEN = 'tok-mirror-hook-0123456789';
const AT = '2026-11-26T03:04:05.678Z';

const place = (v: unknown, max = 1 << 20) => placeDelivery({ receivedAt: AT, body: Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)) }, max, [KEY, TOKEN]);

/** A mirror in memory, as MirrorStore describes it: cards merged by key, deletes, every call logged. */
class MemoryStore {
  readonly location = '/tmp/memory.sqlite';
  readonly board = { baseUrl: 'http://x', server: 'x:80', id: 'b' };
  readonly cardsById = new Map<string, Card>();
  readonly batches: MirrorDelivery[][] = [];
  readonly log: string[] = [];
  fail: Error | undefined;
  /** Called at each apply, before it is done (what the test checks at that moment). */
  onApply: (() => void) | undefined;

  card(id: string): Card | undefined {
    return this.cardsById.get(id);
  }
  applyDeliveries(deliveries: readonly MirrorDelivery[]): MirrorChange[] {
    this.onApply?.();
    if (this.fail) throw this.fail;
    this.batches.push([...deliveries]);
    const changes: MirrorChange[] = [];
    for (const d of deliveries) {
      if (d.kind === 'card') {
        const before = this.cardsById.get(d.card._id);
        const after = { ...before, ...d.card };
        if (JSON.stringify(before) === JSON.stringify(after)) continue;
        this.cardsById.set(after._id, after);
        changes.push({ id: after._id, ...(before ? { before } : {}), after });
      } else if (d.kind === 'deleted') {
        const before = this.cardsById.get(d.id);
        this.cardsById.delete(d.id);
        if (before) changes.push({ id: d.id, before });
      }
    }
    return changes;
  }
  listenerBeat(since: string, now: string): void {
    this.log.push(`beat ${since} ${now}`);
  }
  listenerGone(since: string): void {
    this.log.push(`gone ${since}`);
  }
  sync(): void {
    this.log.push('sync');
  }
  close(): void {
    this.log.push('close');
  }
}

/** A clock whose sleeps wait until the test moves it on. */
function steppedClock(start: number) {
  let now = start;
  const sleeping: Array<{ at: number; resolve: () => void }> = [];
  const clock: Clock = {
    now: () => now,
    random: () => 0.5,
    sleep: (ms, signal) =>
      new Promise<void>((resolve) => {
        if (signal?.aborted) return resolve();
        const timer = { at: now + ms, resolve };
        sleeping.push(timer);
        signal?.addEventListener('abort', () => resolve(), { once: true });
      }),
  };
  const advance = async (ms: number) => {
    now += ms;
    for (const t of sleeping.splice(0)) {
      if (t.at <= now) t.resolve();
      else sleeping.push(t);
    }
    await new Promise((r) => setImmediate(r));
  };
  return { clock, advance, sleepers: () => sleeping.length };
}

function plan(store: MemoryStore, over: Partial<ListenPlan> = {}): ListenPlan {
  return { host: '127.0.0.1', port: 0, path: '/', key: KEY, secrets: [KEY, TOKEN], maxBody: 1 << 20, limits: {}, mirror: { open: () => store as unknown as MirrorStore }, ...over };
}

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function running(store: MemoryStore, over: Partial<ListenPlan> = {}, clock: Clock = realClock) {
  const events: ListenEvent[] = [];
  const engine = new ListenEngine(plan(store, over), { clock, onEvent: (e) => events.push(e) });
  const ready = await engine.start();
  const stop = childStop();
  const run = engine.run(stop, new AbortController().signal);
  const end = async () => {
    stop.abort('test');
    await run;
  };
  cleanups.push(end);
  return { ready, events, end, deliveries: () => events.filter((e): e is Extract<ListenEvent, { type: 'delivery' }> => e.type === 'delivery') };
}

describe('placeDelivery: a delivery as the mirror places it', () => {
  it('places cards (bare or wrapped), deletes that name their card and comments, with the event name', () => {
    expect(place({ _id: 'c1', Status: 'Open' })).toEqual({ kind: 'card', receivedAt: AT, card: { _id: 'c1', Status: 'Open' } });
    expect(place({ event: 'card.updated', data: { _id: 'c1', Status: 'Done' } })).toEqual({ kind: 'card', receivedAt: AT, card: { _id: 'c1', Status: 'Done' }, name: 'card.updated' });
    expect(place({ event: 'card.deleted', card: { _id: 'c1' } })).toEqual({ kind: 'deleted', receivedAt: AT, id: 'c1', name: 'card.deleted' });
    expect(place({ _id: 'c2', deleted: true })).toEqual({ kind: 'deleted', receivedAt: AT, id: 'c2' });
    expect(place({ event: 'comment.created', cardId: 'c1', data: { content: 'hi', userName: 'Ada' } })).toEqual({ kind: 'comment', receivedAt: AT, cardId: 'c1', name: 'comment.created' });
  });

  it('never guesses: a delete with no id, an upload, an array, text and a body too large to read are unplaced, kept as text', () => {
    expect(place({ event: 'card.deleted', data: { Name: 'x' } })).toEqual({ kind: 'unplaced', receivedAt: AT, name: 'card.deleted', body: '{"event":"card.deleted","data":{"Name":"x"}}' });
    expect(place({ event: 'file.uploaded', cardId: 'c9', data: { fileName: 'a.png' } })).toMatchObject({ kind: 'unplaced', name: 'file.uploaded', cardId: 'c9' });
    expect(place([1, 2])).toEqual({ kind: 'unplaced', receivedAt: AT, body: '[1,2]' });
    expect(place('not json')).toEqual({ kind: 'unplaced', receivedAt: AT, body: 'not json' });
    expect(place({ _id: 'big', N: 1 }, 10)).toEqual({ kind: 'unplaced', receivedAt: AT, body: '{"_id":"big","N":1}' });
  });

  it('holds no secret a body spells with JSON escapes (the listener scrubbed the plain ones)', () => {
    const escaped = (s: string) => s.replace('-', '\\u002d');
    const card = place(`{"_id":"c1","Note":"${escaped(KEY)}","${escaped(TOKEN)}":1}`);
    expect(card).toEqual({ kind: 'card', receivedAt: AT, card: { _id: 'c1', Note: '***', '***': 1 } });
    const unplaced = place(`{"hello":"${escaped(KEY)}"}`);
    expect(unplaced).toEqual({ kind: 'unplaced', receivedAt: AT, body: '{"hello":"***"}' });
  });
});

describe('the listen engine with a mirror', () => {
  it('applies each batch in one call after it is recorded and before its 200s; a throw answers 500 and is not counted', async () => {
    const store = new MemoryStore();
    const record = join(tempDir(), 'hooks.jsonl');
    const recordedAtApply: number[] = [];
    store.onApply = () => recordedAtApply.push(readFileSync(record, 'utf8').split('\n').filter(Boolean).length);
    const l = await running(store, { record });
    // Two deliveries in one event-loop turn: one batch, one call.
    const both = await Promise.all([post(l.ready.url, '{"_id":"c1","Status":"Open"}', KEY), post(l.ready.url, '[1]', KEY)]);
    expect(both).toEqual([200, 200]);
    expect(store.batches.flat().map((d) => d.kind).sort()).toEqual(['card', 'unplaced']);
    expect(recordedAtApply.at(-1)).toBe(2);
    store.fail = new Error('disk I/O error');
    expect(await post(l.ready.url, '{"_id":"c2"}', KEY)).toBe(500);
    expect(l.events).toContainEqual({ type: 'error', message: 'cannot apply to the mirror: disk I/O error' });
    store.fail = undefined;
    expect(await post(l.ready.url, '{"_id":"c2"}', KEY)).toBe(200);
    await l.end();
    const stopped = l.events.find((e) => e.type === 'stopped');
    expect(stopped).toMatchObject({ stats: { delivered: 3 }, mirror: { location: store.location, applied: 2, unplaced: 1 } });
  });

  it("shows each change against the mirror's card when the listener does not know it (no record file)", async () => {
    const store = new MemoryStore();
    store.cardsById.set('c1', { _id: 'c1', Name: 'Fix login', Status: 'Open' });
    store.cardsById.set('c2', { _id: 'c2', Name: 'Other', Status: 'Open' });
    const l = await running(store);
    expect(await post(l.ready.url, '{"_id":"c1","Status":"Done"}', KEY)).toBe(200);
    // Nothing changed in the mirror: still compared against its card, not shown as new.
    expect(await post(l.ready.url, '{"_id":"c2","Status":"Open"}', KEY)).toBe(200);
    expect(await post(l.ready.url, '{"_id":"c3","Status":"Open"}', KEY)).toBe(200);
    expect(l.deliveries().map((d) => [d.change.event, d.change.changes])).toEqual([
      ['changed', [{ field: 'Status', before: 'Open', after: 'Done' }]],
      ['unchanged', []],
      ['new', [{ field: 'Status', after: 'Open' }]],
    ]);
    expect(store.card('c1')).toEqual({ _id: 'c1', Name: 'Fix login', Status: 'Done' });
  });

  it('beats at start and every LISTENER_BEAT_MS on its clock, and at stop says the listener is gone, then closes the mirror', async () => {
    const store = new MemoryStore();
    const start = Date.parse('2026-11-26T10:00:00.000Z');
    const time = steppedClock(start);
    const l = await running(store, {}, time.clock);
    const since = '2026-11-26T10:00:00.000Z';
    expect(store.log).toEqual([`beat ${since} ${since}`]);
    expect(l.ready.mirror).toBe(store.location);
    await time.advance(LISTENER_BEAT_MS - 1);
    expect(store.log).toHaveLength(1);
    await time.advance(1);
    await time.advance(LISTENER_BEAT_MS);
    expect(store.log).toEqual([`beat ${since} ${since}`, `beat ${since} 2026-11-26T10:00:10.000Z`, `beat ${since} 2026-11-26T10:00:20.000Z`]);
    await l.end();
    expect(store.log.slice(-3)).toEqual([`gone ${since}`, 'sync', 'close']);
    // The run's end is reported once the mirror is closed.
    expect(l.events.at(-1)).toMatchObject({ type: 'stopped' });
  });

  it('syncs the mirror to the disk a second at most after deliveries were applied, on its clock, and not while none come', async () => {
    const store = new MemoryStore();
    const time = steppedClock(Date.parse('2026-11-26T10:00:00.000Z'));
    const l = await running(store, {}, time.clock);
    const syncs = () => store.log.filter((line) => line === 'sync').length;
    await time.advance(1000);
    expect(syncs()).toBe(0);
    expect(await post(l.ready.url, '{"_id":"c1","Status":"Open"}', KEY)).toBe(200);
    expect(syncs()).toBe(0);
    await time.advance(1000);
    expect(syncs()).toBe(1);
    await time.advance(1000);
    await time.advance(1000);
    expect(syncs()).toBe(1);
    expect(await post(l.ready.url, '{"_id":"c1","Status":"Done"}', KEY)).toBe(200);
    await time.advance(1000);
    expect(syncs()).toBe(2);
    await l.end();
  });

  it('parses each body once: the change line is read from what the mirror placed', async () => {
    const store = new MemoryStore();
    const l = await running(store);
    const parse = vi.spyOn(JSON, 'parse');
    let parsed: unknown[];
    try {
      expect(await post(l.ready.url, '{"_id":"c1","Status":"Open"}', KEY)).toBe(200);
    } finally {
      parsed = parse.mock.calls.map(([text]) => text);
      parse.mockRestore();
    }
    expect(parsed.filter((text) => text === '{"_id":"c1","Status":"Open"}')).toHaveLength(1);
    expect(l.deliveries()[0]!.change).toMatchObject({ event: 'new', changes: [{ field: 'Status', after: 'Open' }] });
  });

  it('a start that fails closes the mirror', async () => {
    const store = new MemoryStore();
    const events: ListenEvent[] = [];
    const engine = new ListenEngine(plan(store, { host: '256.0.0.1' }), { clock: realClock, onEvent: (e) => events.push(e) });
    await expect(engine.start()).rejects.toThrow(/cannot listen/);
    expect(store.log.at(-1)).toBe('close');
  });
});
