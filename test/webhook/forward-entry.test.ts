// A forward try's entry: the app's answer bounded and without the run's secrets; written to the record file
// by the listener after each try (a failed write stops nothing), skipped by every reader of deliveries, read
// back as history so the inspector shows the last answer to an old delivery.
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { CardStates } from '../../src/webhook/changes.js';
import { toRecordLine, type Delivery } from '../../src/webhook/delivery.js';
import { ANSWER_BODY_BYTES, type ForwardEntry, forwardEntry, forwardLineJson } from '../../src/webhook/forward-entry.js';
import type { ForwardEvent } from '../../src/webhook/forwarder.js';
import { readHistory } from '../../src/webhook/history.js';
import { EntryStore } from '../../src/webhook/inspector/store.js';
import { Listener, type ListenerEvent } from '../../src/webhook/listener.js';
import { readDeliveries, RecordFile, sniffRecordFile } from '../../src/webhook/record-file.js';
import { checkRecordFile } from '../../src/webhook/replay.js';
import { tempDir } from '../helpers/cli.js';
import { startLocalServer } from '../helpers/receiver.js';
import { waitFor } from '../helpers/wait.js';
import { post } from './helpers.js';

const KEY = 'whsk-entry-key-0123456789';
const TOKEN = 'tok-entry-board-token-abcdef';
const AT = '2026-11-27T16:00:00.000Z';

const event = (answer: ForwardEvent['answer'], over: Partial<ForwardEvent> = {}): ForwardEvent => ({ type: 'forward', seq: 3, url: 'http://127.0.0.1:3000/hooks', attempt: 1, answer, ok: false, retryInMs: 100, pending: 1, ...over });
const delivery = (seq: number, body: string): Delivery => ({ seq, receivedAt: AT, method: 'POST', path: '/', headers: {}, body: Buffer.from(body) });

describe('forwardEntry: the app answer as kept', () => {
  it('is the contract shape: status, time, headers and the body as a value; an error and no answer when none came', () => {
    const answered = forwardEntry(event({ status: 500, ms: 12.345, body: Buffer.from('{"a":1}'), headers: { 'content-type': 'application/json' } }), AT, []);
    expect(answered).toEqual({ seq: 3, url: 'http://127.0.0.1:3000/hooks', attempt: 1, ok: false, at: AT, status: 500, ms: 12.3, headers: { 'content-type': 'application/json' }, body: { a: 1 } });
    expect(forwardLineJson(answered)).toMatch(/^\{"forward":\{"seq":3,"url":/);
    const refused = forwardEntry(event({ ms: 1, body: Buffer.alloc(0), error: 'ECONNREFUSED' }), AT, []);
    expect(refused).toEqual({ seq: 3, url: 'http://127.0.0.1:3000/hooks', attempt: 1, ok: false, at: AT, status: null, ms: 1, error: 'ECONNREFUSED' });
  });

  it('writes a JSON answer as the app sent it (digits a double would round), and a cut one as its text, never parsed', () => {
    const line = (body: string) => forwardLineJson(forwardEntry(event({ status: 200, ms: 1, body: Buffer.from(body), headers: { 'content-type': 'application/json' } }, { ok: true }), AT, []));
    expect(line(' {"id":12345678901234567890,"v":1.10} ')).toBe(
      `{"forward":{"seq":3,"url":"http://127.0.0.1:3000/hooks","attempt":1,"ok":true,"at":"${AT}","status":200,"ms":1,"headers":{"content-type":"application/json"},"body":{"id":12345678901234567890,"v":1.10}}}`,
    );
    // On more than one line: one line in the file all the same, its value kept.
    expect(JSON.parse(line('{\n"a": [1,\r\n2]}')).forward.body).toEqual({ a: [1, 2] });
    // 5000 digits cut to 4096 would parse as Infinity, written null.
    const cut = JSON.parse(line('7'.repeat(5000))).forward;
    expect([cut.body, cut.bodyTruncated]).toEqual(['7'.repeat(ANSWER_BODY_BYTES), true]);
  });

  it('keeps the first 4 KiB of the body, cut between characters, and says it was cut', () => {
    const body = Buffer.from(`${'a'.repeat(ANSWER_BODY_BYTES - 1)}é and more`);
    const e = forwardEntry(event({ status: 200, ms: 1, body, headers: {} }), AT, []);
    expect(e.body).toBe('a'.repeat(ANSWER_BODY_BYTES - 1));
    expect(e.bodyTruncated).toBe(true);
    const whole = forwardEntry(event({ status: 200, ms: 1, body: Buffer.from('x'.repeat(ANSWER_BODY_BYTES)), headers: {} }), AT, []);
    expect(whole.bodyTruncated).toBeUndefined();
  });

  it('has no secret, in header names or values, in the body plainly, spelled with JSON escapes, or cut in two at the end', () => {
    const secrets = [KEY, TOKEN];
    const spelled = KEY.replaceAll('-', '\\u002d');
    const e = forwardEntry(event({ status: 401, ms: 1, body: Buffer.from(`{"k":"${spelled}","t":"token ${TOKEN}"}`), headers: { 'x-echo': `key=${KEY}`, [`x-${TOKEN}`]: 'v' } }), AT, secrets);
    expect(e.headers).toEqual({ 'x-echo': 'key=***', 'x-***': 'v' });
    expect(e.body).toEqual({ k: '***', t: 'token ***' });
    // The start of the key at the 4 KiB cut (whole, it would have been replaced first): not kept either.
    const straddling = Buffer.from(`${'a'.repeat(ANSWER_BODY_BYTES - 10)}${KEY.slice(0, 14)} tail`);
    const cut = forwardEntry(event({ status: 500, ms: 1, body: straddling, headers: {} }), AT, secrets);
    expect(cut.body).toBe('a'.repeat(ANSWER_BODY_BYTES - 10));
    expect(cut.bodyTruncated).toBe(true);
    expect(JSON.stringify([e, cut])).not.toContain('entry-key');
  });
});

describe('forward entries in a record file', () => {
  function recordWithForwards(): string {
    const path = join(tempDir(), 'r.jsonl');
    const line = (seq: number, status: number) => `${forwardLineJson(forwardEntry(event({ status, ms: 1, body: Buffer.from(`answer ${seq}`), headers: {} }, { seq }), AT, []))}\n`;
    writeFileSync(path, [toRecordLine(delivery(1, '{"_id":"a","N":"1"}')), line(1, 500), line(1, 200), toRecordLine(delivery(2, '{"_id":"a","N":"2"}')), line(2, 200)].join(''));
    return path;
  }

  it('are neither deliveries nor unreadable lines: every reader skips them, history hands on the last of each after the deliveries', () => {
    const path = recordWithForwards();
    const all = readDeliveries(path, 0, 0, 10, 1e9);
    expect(all.deliveries.map((d) => d.seq)).toEqual([1, 2]);
    expect(all.unreadable).toEqual([]);
    expect(all.lines).toBe(5);
    expect(readDeliveries(path, 0, 1, 10, 1e9).deliveries.map((d) => d.seq)).toEqual([2]);
    const order: string[] = [];
    const read = readHistory(path, new CardStates(), (d) => order.push(`delivery ${d.seq}`), undefined, (f) => order.push(`forward ${f.seq} ${f.status}`));
    expect(read).toBe(2);
    // The last try of each delivery only: a long outage's thousands of tries are not all held at once.
    expect(order).toEqual(['delivery 1', 'delivery 2', 'forward 1 200', 'forward 2 200']);
    // A file that starts with one (its delivery's line cut short by a crash) is still a record file.
    const starts = join(tempDir(), 'r.jsonl');
    writeFileSync(starts, readFileSync(path, 'utf8').split('\n').slice(1).join('\n'));
    expect(sniffRecordFile(starts)).toBe('record');
    expect(checkRecordFile(starts)).toBe('record');
    // One cut short by a crash is skipped as silently.
    appendFileSync(path, '{"forward":{"seq":2,"url":"http://');
    const cut = join(tempDir(), 'r.jsonl');
    writeFileSync(cut, `${readFileSync(path, 'utf8')}\n`);
    expect(readDeliveries(cut, 0, 0, 10, 1e9).unreadable).toEqual([]);
  });

  it("do not count in the history's tail: the deliveries a long outage's tries came after are still read, within the scan's bound", () => {
    const path = join(tempDir(), 'r.jsonl');
    const d = [1, 2, 3].map((seq) => toRecordLine(delivery(seq, `{"_id":"a","N":"${seq}"}`)));
    const tries = Array.from({ length: 200 }, (_, i) => `${forwardLineJson(forwardEntry(event({ status: 500, ms: 1, body: Buffer.from('x'.repeat(400)), headers: {} }, { seq: 1, attempt: i + 1 }), AT, []))}\n`).join('');
    writeFileSync(path, d[0]! + d[1]! + tries + d[2]!);
    const seen = (tail: number, scan?: number) => {
      const seqs: number[] = [];
      readHistory(path, new CardStates(), (x) => seqs.push(x.seq), tail, undefined, scan);
      return seqs;
    };
    // 80 KB of forward lines, and a tail that holds the three deliveries' lines: all three are read.
    expect(seen(d[0]!.length + d[1]!.length + d[2]!.length)).toEqual([1, 2, 3]);
    // One byte less: the oldest does not fit.
    expect(seen(d[0]!.length + d[1]!.length + d[2]!.length - 1)).toEqual([2, 3]);
    // Looked for at most `scan` bytes back: from the first line that starts in them.
    expect(seen(d[0]!.length + d[1]!.length + d[2]!.length, tries.length / 2)).toEqual([3]);
  });

  it('are appended after the deliveries, never once the file is closed; a restarted file numbers on', async () => {
    const path = join(tempDir(), 'r.jsonl');
    const file = new RecordFile(path);
    file.append({ receivedAt: AT, method: 'POST', path: '/', headers: {}, body: Buffer.from('one') });
    const entry: ForwardEntry = forwardEntry(event({ status: 200, ms: 1, body: Buffer.from('ok'), headers: {} }, { seq: 1 }), AT, []);
    file.appendForward(entry);
    await file.close();
    file.appendForward({ ...entry, attempt: 2 });
    const lines = readFileSync(path, 'utf8').split('\n').filter(Boolean);
    expect(lines).toHaveLength(2);
    expect(JSON.parse(lines[1]!)).toEqual({ forward: entry });
    const again = new RecordFile(path);
    expect(again.lastSeq).toBe(1);
    expect(again.append({ receivedAt: AT, method: 'POST', path: '/', headers: {}, body: Buffer.from('two') }).delivery.seq).toBe(2);
    await again.close();
  });
});

describe('the listener writes an entry per try', () => {
  async function slowApp(answers: number[]) {
    let n = 0;
    const app = await startLocalServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const status = answers[n++] ?? 200;
        setTimeout(() => res.writeHead(status, { 'content-type': 'text/plain', 'x-try': String(n) }).end(`answer ${n}`), 5);
      });
    });
    onTestFinished(app.close);
    return app;
  }

  it('after each try, the deliveries spilled past memory are read back past the entries, and forwarded in order', async () => {
    const app = await slowApp([500]);
    const path = join(tempDir(), 'r.jsonl');
    const record = new RecordFile(path);
    const forwards: Array<Extract<ListenerEvent, { type: 'forward' }>> = [];
    const listener = new Listener({
      host: '127.0.0.1',
      port: 0,
      path: '/',
      key: KEY,
      secrets: [TOKEN],
      maxBody: 1024 * 1024,
      record,
      forward: { url: `${app.url}/hooks`, timeout: { ms: 30_000, text: '30s' }, memoryCount: 1, retryCapMs: 10 },
      onEvent: (e) => void (e.type === 'forward' && forwards.push(e)),
    });
    const url = await listener.start();
    for (const i of [1, 2, 3, 4]) expect(await post(url, `{"_id":"c${i}"}`, KEY)).toBe(200);
    await waitFor(() => forwards.filter((f) => f.ok).length === 4, { what: () => `4 deliveries forwarded (${forwards.length} tries)` });
    await listener.stop();
    expect(forwards.filter((f) => f.ok).map((f) => f.seq)).toEqual([1, 2, 3, 4]);
    const lines = readFileSync(path, 'utf8').split('\n').filter(Boolean);
    const entries = lines.filter((l) => l.startsWith('{"forward":')).map((l) => (JSON.parse(l) as { forward: ForwardEntry }).forward);
    expect(entries.map((e) => [e.seq, e.attempt, e.status])).toEqual([[1, 1, 500], [1, 2, 200], [2, 1, 200], [3, 1, 200], [4, 1, 200]]);
    expect(entries[0]).toMatchObject({ headers: { 'x-try': '1' }, body: 'answer 1' });
    // The event carries the entry the file got.
    expect(forwards.map((f) => f.entry)).toEqual(entries);
  });

  it('a record file that cannot take an entry stops neither the 200s nor forwarding: reported once', async () => {
    const app = await slowApp([]);
    class NoEntries extends RecordFile {
      override appendForward(): void {
        throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
      }
    }
    const record = new NoEntries(join(tempDir(), 'r.jsonl'));
    const events: ListenerEvent[] = [];
    const listener = new Listener({ host: '127.0.0.1', port: 0, path: '/', key: KEY, maxBody: 1024 * 1024, record, forward: { url: `${app.url}/hooks`, timeout: { ms: 30_000, text: '30s' } }, onEvent: (e) => void events.push(e) });
    const url = await listener.start();
    onTestFinished(() => listener.stop());
    for (const i of [1, 2, 3]) expect(await post(url, `{"_id":"c${i}"}`, KEY)).toBe(200);
    await waitFor(() => events.filter((e) => e.type === 'forward').length === 3, { what: 'three forwards' });
    const errors = events.filter((e) => e.type === 'error');
    expect(errors).toEqual([{ type: 'error', message: expect.stringContaining("cannot write the app's answer to the record file") as unknown }]);
    expect(events.filter((e) => e.type === 'delivery')).toHaveLength(3);
  });
});

describe("the inspector's store keeps the answer for the detail only", () => {
  it('the list and the forward event without headers and body; the detail with them, redacted; a restored entry too', () => {
    const store = new EntryStore(true, 10, 1e9, [KEY]);
    store.add(delivery(3, '{"_id":"a"}'), { event: 'new', cardId: 'a', changes: [] }, false);
    const small = store.forward(event({ status: 500, ms: 2, body: Buffer.from(`no ${KEY}`), headers: { 'x-echo': KEY } }));
    expect(small).toEqual({ url: 'http://127.0.0.1:3000/hooks', attempt: 1, ok: false, status: 500, ms: 2 });
    expect(store.view(3)!.forward).toEqual(small);
    expect(store.detail(3)!.forward).toEqual({ ...small, headers: { 'x-echo': '***' }, body: 'no ***' });
    // Read back from a record file written by a run whose key was another: this run's key is still redacted.
    store.restoreForward({ seq: 3, url: 'http://127.0.0.1:3000/hooks', attempt: 2, ok: true, at: AT, status: 200, ms: 1, headers: { 'x-echo': `k ${KEY}` }, body: { said: KEY }, bodyTruncated: true });
    expect(store.detail(3)!.forward).toEqual({ url: 'http://127.0.0.1:3000/hooks', attempt: 2, ok: true, status: 200, ms: 1, headers: { 'x-echo': 'k ***' }, body: { said: '***' }, bodyTruncated: true });
    expect(store.view(3)!.forward).toEqual({ url: 'http://127.0.0.1:3000/hooks', attempt: 2, ok: true, status: 200, ms: 1 });
    // An entry for a delivery not kept changes nothing.
    store.restoreForward({ seq: 99, url: 'u', attempt: 1, ok: true, at: AT, status: 200, ms: 1 });
    expect(store.detail(99)).toBeUndefined();
  });
});
