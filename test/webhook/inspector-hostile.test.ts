// The inspector's replay and stream against what a hostile page or user may send: a URL with a
// credential, of any length, or that is this run's listener; headers past what a server takes; a
// delivery number that is not one; HEAD of the stream. Each is a 4xx with a short message, nothing sent.
import { afterEach, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { CardStates } from '../../src/webhook/changes.js';
import type { ReplayEvent } from '../../src/webhook/inspector/replay.js';
import { act, type Cleanup, delivery, raw, receiver, startInspector } from './inspector-helpers.js';
import { inspectingListener, post } from './helpers.js';

let cleanup: Cleanup = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
});

const BODY = '{"_id":"c1","Name":"Alpha"}';

async function withDelivery() {
  const replays: ReplayEvent[] = [];
  const i = await startInspector(cleanup, { onReplay: (e) => replays.push(e) });
  i.add(delivery(3, BODY), new CardStates().apply(Buffer.from(BODY)), { recorded: false });
  return { i, replays };
}

const errorOf = (text: string) => (JSON.parse(text) as { error: string }).error;

describe('inspector: hostile replays', () => {
  it('refuses a URL with user:password (it would be printed and returned), never echoing it, and a URL past 8192 characters', async () => {
    const app = await receiver(cleanup);
    const { i, replays } = await withDelivery();
    const withCredential = app.url.replace('http://', 'http://me:hunter2-secret@');
    for (const path of ['replay', 'api/deliveries/3/replay']) {
      const r = await act(i, 'POST', path, { seq: 3, url: withCredential });
      expect(r.status, path).toBe(400);
      expect(errorOf(r.text)).toMatch(/user:password: give a credential as a header/);
      expect(r.text).not.toContain('hunter2');
    }
    const long = await act(i, 'POST', 'replay', { seq: 3, url: `${app.url}?${'a'.repeat(9000)}` });
    expect([long.status, errorOf(long.text)]).toEqual([400, 'the replay URL is 8192 characters at most']);
    expect(app.got).toHaveLength(0);
    expect(replays).toHaveLength(0);
  });

  it('refuses headers past 16 KiB together, one long value or many, with a message that stays short', async () => {
    const app = await receiver(cleanup);
    const { i } = await withDelivery();
    const many: Record<string, string> = {};
    for (let n = 0; n < 2000; n++) many[`x-h${n}`] = 'v';
    for (const headers of [{ 'x-a': 'a'.repeat(1 << 20) }, many]) {
      const r = await act(i, 'POST', 'replay', { seq: 3, url: app.url, headers });
      expect(r.status).toBe(400);
      expect(errorOf(r.text)).toMatch(/^the headers are 16384 bytes at most together/);
    }
    const badName = await act(i, 'POST', 'replay', { seq: 3, url: app.url, headers: { [`${'n'.repeat(100_000)} `]: 'v' } });
    expect(badName.status).toBe(400);
    expect(errorOf(badName.text).length).toBeLessThan(200);
    expect(app.got).toHaveLength(0);
  });

  it('names a header value\'s character past U+00FF, which HTTP cannot carry, rather than calling it a control character', async () => {
    const app = await receiver(cleanup);
    const { i } = await withDelivery();
    const r = await act(i, 'POST', 'replay', { seq: 3, url: app.url, headers: { 'x-price': '12 €' } });
    expect([r.status, errorOf(r.text)]).toEqual([400, 'header "x-price" has "€", a character past U+00FF that a header cannot carry (percent-encode it) in its value']);
    expect(app.got).toHaveLength(0);
  });

  it('answers 400 to a page replay whose seq is not a delivery\'s number', async () => {
    const app = await receiver(cleanup);
    const { i } = await withDelivery();
    for (const seq of [-1, 0, 1.5, 1e300]) {
      const r = await act(i, 'POST', 'replay', { seq, url: app.url });
      expect([r.status, errorOf(r.text)], String(seq)).toEqual([400, '"seq" must be a delivery\'s number: a whole number from 1']);
    }
    expect(app.got).toHaveLength(0);
  });

  it('answers HEAD of the event stream with its head and ends, as for any page', async () => {
    const { i } = await withDelivery();
    const r = await raw(i.port, 'HEAD', `/${i.token}/events`);
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('text/event-stream; charset=utf-8');
  });
});

describe('webhook listen --inspect: a replay to the listener itself', () => {
  it('is refused: it would come back as a new delivery', async () => {
    const KEY = 'sk-hostile-replay-0123';
    const l = await inspectingListener(['--inspect', '0'], KEY, cleanup);
    const page = l.page;
    const token = new URL(page).pathname.split('/')[1]!;
    expect(await post(l.url, BODY, KEY)).toBe(200);
    const port = new URL(l.url).port;
    for (const url of [l.url, `http://localhost:${port}/`, `http://127.0.0.2:${port}/x`]) {
      const res = await request(`${page}api/deliveries/1/replay`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-cardboard-token': token }, body: JSON.stringify({ url }) });
      const text = await res.body.text();
      expect([res.statusCode, errorOf(text)], url).toEqual([400, `${url} is this run's listener itself: the replay would come back as a new delivery; replay to your app instead`]);
    }
    const list = await request(`${page}api/deliveries`);
    expect(((await list.body.json()) as { deliveries: unknown[] }).deliveries).toHaveLength(1);
  });
});

describe('webhook listen --inspect: a replay\'s answer that echoes the key', () => {
  it('shows it as *** in the replay\'s line and in the API\'s answer, escaped in the JSON body or not', async () => {
    const KEY = 'sk-hostile-echo-0123456789';
    const escaped = [...KEY].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');
    const app = await receiver(cleanup, () => `{"escaped":"${escaped}","plain":"${KEY}"}`);
    const l = await inspectingListener(['--inspect', '0'], KEY, cleanup);
    const page = l.page;
    const token = new URL(page).pathname.split('/')[1]!;
    expect(await post(l.url, BODY, KEY)).toBe(200);
    const res = await request(`${page}api/deliveries/1/replay`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-cardboard-token': token }, body: JSON.stringify({ url: app.url }) });
    const answer = (await res.body.json()) as { body: string };
    expect(JSON.parse(answer.body)).toEqual({ escaped: '***', plain: '***' });
    await l.waitFor(/"replay"/, 'stdout');
    const line = l.stdout().split('\n').find((s) => s.includes('"replay"'))!;
    expect(line).toContain('\\"escaped\\":\\"***\\"');
    expect(line).not.toContain('\\\\u0073');
    expect(l.stdout() + l.stderr()).not.toContain(KEY);
  });
});

