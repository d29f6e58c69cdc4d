// The order the listener promises (spec 6: anything but a 200 is sent again): a verified delivery's line is
// in the record file before its 200 is written, so an acknowledged delivery is never only in memory; and
// the 200 waits for nothing after that: not for onEvent (the renderer may block or throw), not for the
// forwarder (the app may never answer); a renderer that throws takes nothing down with it. Driven through
// Listener's own API over real HTTP; each 200 has a deadline, so a listener that withholds it fails the
// test by name rather than by the test timeout.
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { Delivery } from '../../src/webhook/delivery.js';
import { Listener, type ListenerEvent, type ListenerOptions } from '../../src/webhook/listener.js';
import { type Recorded, RecordFile } from '../../src/webhook/record-file.js';
import { tempDir } from '../helpers/cli.js';
import { startLocalServer } from '../helpers/receiver.js';
import { waitFor, within } from '../helpers/wait.js';
import { post } from './helpers.js';

const KEY = 'sk-order-0123456789';
/** Names each test delivery, so the record and the server's responses can be matched up. */
const ID = 'x-test-id';

/** The server side of every HTTP request in this process, by its x-test-id (node:http's own diagnostics channel). */
function watchResponses(): Map<string, ServerResponse> {
  const responses = new Map<string, ServerResponse>();
  const onStart = (message: unknown) => {
    const { request, response } = message as { request: IncomingMessage; response: ServerResponse };
    const id = request.headers[ID];
    if (typeof id === 'string') responses.set(id, response);
  };
  subscribe('http.server.request.start', onStart);
  onTestFinished(() => void unsubscribe('http.server.request.start', onStart));
  return responses;
}

/** A record file that notes, as each delivery is appended, whether its response had already been written. */
class WatchedRecord extends RecordFile {
  /** x-test-id → whether the 200's head was already written when the line was appended. */
  readonly answeredFirst = new Map<string, boolean>();

  constructor(
    path: string,
    private readonly responses: Map<string, ServerResponse>,
  ) {
    super(path);
  }

  override appendAll(batch: readonly Omit<Delivery, 'seq'>[]): Recorded[] {
    for (const d of batch) {
      const id = d.headers[ID] ?? '';
      this.answeredFirst.set(id, this.responses.get(id)?.headersSent ?? false);
    }
    return super.appendAll(batch);
  }
}

/** A record file whose every append fails, as a full disk would. */
class FullDisk extends RecordFile {
  override appendAll(): Recorded[] {
    throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
  }
}

async function startListener(opts: Partial<ListenerOptions> & Pick<ListenerOptions, 'onEvent'>): Promise<{ listener: Listener; url: string }> {
  const listener = new Listener({ host: '127.0.0.1', port: 0, path: '/', key: KEY, maxBody: 1024 * 1024, ...opts });
  const url = await listener.start();
  onTestFinished(() => listener.stop());
  return { listener, url };
}

/**
 * POST delivery `id`; resolves with its status, failing by name if no answer comes within 10 s: on loopback
 * the answer takes milliseconds, and the listener's own request deadline (30 s) would end it less clearly.
 */
const deliver = (url: string, id: string) => within(post(url, `{"_id":"${id}"}`, KEY, { [ID]: id }), { what: `the answer to delivery ${id}`, timeoutMs: 10_000 });

// The deliveries' lines: a forward try's entry (`{"forward":…}`) is not one.
const recordedIds = (path: string) =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('{"seq":'))
    .map((l) => (JSON.parse(l) as { body: { _id: string } }).body._id);

describe('the record file is written before the 200', () => {
  it('each line is appended while its response is still unwritten, and a client holding its 200 finds it in the file', async () => {
    const responses = watchResponses();
    const record = new WatchedRecord(join(tempDir(), 'r.jsonl'), responses);
    const { url } = await startListener({ record, onEvent: () => {} });
    // One at a time, then a burst that arrives in one turn and is written as one batch.
    const ids = ['one', 'two', ...Array.from({ length: 8 }, (_, i) => `burst-${i}`)];
    const foundOnAnswer = new Map<string, boolean>();
    const send = async (id: string) => {
      expect(await deliver(url, id)).toBe(200);
      foundOnAnswer.set(id, recordedIds(record.path).includes(id));
    };
    await send('one');
    await send('two');
    await Promise.all(ids.slice(2).map(send));
    // Every response was seen (else the check below would pass for want of one), and every line appended.
    expect([...responses.keys()].sort()).toEqual([...ids].sort());
    expect([...record.answeredFirst.keys()].sort()).toEqual([...ids].sort());
    expect([...record.answeredFirst].filter(([, answered]) => answered)).toEqual([]);
    expect([...foundOnAnswer].filter(([, found]) => !found)).toEqual([]);
  });

  it('a line that cannot be written is answered 500, never 200: the service sends it again', async () => {
    const events: ListenerEvent[] = [];
    const { listener } = await startListener({ record: new FullDisk(join(tempDir(), 'r.jsonl')), onEvent: (e) => events.push(e) });
    const url = `http://127.0.0.1:${listener.port}/`;
    expect(await deliver(url, 'lost')).toBe(500);
    expect(listener.stats).toMatchObject({ delivered: 0, rejected: { 500: 1 } });
    expect(events.filter((e) => e.type === 'delivery')).toEqual([]);
    expect(events).toContainEqual({ type: 'error', message: expect.stringMatching(/^cannot write the record file: ENOSPC/) as unknown });
  });
});

describe('the 200 waits for nothing after the record', () => {
  it('an onEvent that never settles: every delivery is still answered 200 and recorded', async () => {
    const record = new RecordFile(join(tempDir(), 'r.jsonl'));
    const seen: string[] = [];
    const { url } = await startListener({
      record,
      // A renderer stuck on a promise that never settles (a terminal that never drains, say).
      onEvent: (e) => {
        seen.push(e.type);
        return e.type === 'listening' ? undefined : new Promise<never>(() => {});
      },
    });
    for (const id of ['a', 'b', 'c']) expect(await deliver(url, id)).toBe(200);
    expect(recordedIds(record.path)).toEqual(['a', 'b', 'c']);
    expect(seen.filter((t) => t === 'delivery')).toHaveLength(3);
  });

  it('an onEvent that throws: every delivery is still answered 200, recorded and forwarded, the failure is reported once as an error event, and nothing escapes uncaught', async () => {
    // Anything that leaves the listener's turn uncaught lands here (vitest leaves an error to a listener of
    // the test's own), so the test can require that nothing does.
    const uncaught: unknown[] = [];
    const catcher = (err: unknown) => uncaught.push(err);
    for (const event of ['uncaughtException', 'unhandledRejection'] as const) {
      process.on(event, catcher);
      onTestFinished(() => void process.off(event, catcher));
    }
    const forwarded: string[] = [];
    const app = await startLocalServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        forwarded.push((JSON.parse(body) as { _id: string })._id);
        res.end('ok');
      });
    });
    onTestFinished(app.close);
    const seen: ListenerEvent[] = [];
    const record = new RecordFile(join(tempDir(), 'r.jsonl'));
    const { url } = await startListener({
      record,
      forward: { url: `${app.url}/hooks`, timeout: { ms: 30_000, text: '30s' } },
      // A renderer with a bug: it fails at every event after the first, the report of its failure included.
      onEvent: (e) => {
        seen.push(e);
        if (e.type !== 'listening') throw new Error('a renderer bug');
      },
    });
    // One at a time, then a burst answered in one turn: a throw at one delivery's event skips none of the others.
    for (const id of ['a', 'b']) expect(await deliver(url, id)).toBe(200);
    const burst = Array.from({ length: 5 }, (_, i) => `burst-${i}`);
    expect(await Promise.all(burst.map((id) => deliver(url, id)))).toEqual(burst.map(() => 200));
    // The handler ran in the turn that wrote the 200s: had its error escaped, it would be here by now.
    expect(uncaught).toEqual([]);
    const ids = ['a', 'b', ...burst];
    await waitFor(() => forwarded.length === ids.length, { what: () => `every delivery forwarded (forwarded: ${forwarded.join(', ')})` });
    expect(uncaught).toEqual([]);
    expect(recordedIds(record.path)).toEqual(ids);
    expect(forwarded).toEqual(ids);
    expect(seen.filter((e) => e.type === 'delivery')).toHaveLength(ids.length);
    expect(seen.filter((e) => e.type === 'error')).toEqual([{ type: 'error', message: expect.stringContaining('the event handler failed (a renderer bug)') as unknown }]);
  });

  it('an onEvent whose promise rejects: the rejection is reported once as an error event, never left unhandled', async () => {
    const uncaught: unknown[] = [];
    const catcher = (err: unknown) => uncaught.push(err);
    process.on('unhandledRejection', catcher);
    onTestFinished(() => void process.off('unhandledRejection', catcher));
    const errors: string[] = [];
    const record = new RecordFile(join(tempDir(), 'r.jsonl'));
    const { url } = await startListener({
      record,
      // An async renderer whose every write fails (a terminal gone, say).
      onEvent: (e) => {
        if (e.type === 'error') errors.push(e.message);
        return e.type === 'delivery' ? Promise.reject(new Error('write EIO')) : undefined;
      },
    });
    for (const id of ['a', 'b']) expect(await deliver(url, id)).toBe(200);
    // Node reports a rejection left unhandled once the microtasks of the turn are done: two turns on.
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    expect(uncaught).toEqual([]);
    expect(recordedIds(record.path)).toEqual(['a', 'b']);
    expect(errors).toEqual([expect.stringContaining('the event handler failed (write EIO)')]);
  });

  it('a forward queue that never drains (an app that never answers): every delivery is still answered 200', async () => {
    let arrived = 0;
    const held: ServerResponse[] = [];
    const app = await startLocalServer((req, res) => {
      arrived++;
      req.resume();
      held.push(res);
    });
    onTestFinished(app.close);
    const record = new RecordFile(join(tempDir(), 'r.jsonl'));
    const { listener, url } = await startListener({
      record,
      forward: { url: `${app.url}/hooks`, timeout: { ms: 600_000, text: '10m' } },
      onEvent: () => {},
    });
    for (const id of ['a', 'b', 'c', 'd']) expect(await deliver(url, id)).toBe(200);
    expect(recordedIds(record.path)).toEqual(['a', 'b', 'c', 'd']);
    // The first forward is still waiting for its answer, the other three behind it.
    expect(arrived).toBeLessThanOrEqual(1);
    expect(held.every((res) => !res.headersSent)).toBe(true);
    expect(listener.forwarder!.pending).toBe(4);
  });
});
