import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { networkInterfaces } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { CardStates } from '../../src/webhook/changes.js';
import type { ForwardEvent } from '../../src/webhook/forwarder.js';
import { Inspector, type InspectorOptions } from '../../src/webhook/inspector/server.js';
import { durationOf } from '../../src/units.js';
import { within } from '../helpers/wait.js';
import { act, type Cleanup, CSP, delivery, expectSecurityHeaders, KEY, type Raw, raw, receiver, startInspector } from './inspector-helpers.js';

let cleanup: Cleanup = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
});

const inspector = (opts: Partial<InspectorOptions> = {}): Promise<Inspector> => startInspector(cleanup, opts);

function action(i: Inspector, body: unknown, headers: Record<string, string> = {}): Promise<Raw> {
  return act(i, 'POST', 'replay', body, headers);
}

/** Read an event stream, collecting its events; `until` resolves once `cond` holds for them. */
function openEvents(i: Inspector, path = `/${i.token}/events`): { events: Array<{ event: string; data: unknown }>; until(cond: (n: number) => boolean): Promise<void>; close(): void; status: Promise<number> } {
  const events: Array<{ event: string; data: unknown }> = [];
  const waiters: Array<() => void> = [];
  let buffer = '';
  let resolveStatus: (n: number) => void = () => {};
  const status = new Promise<number>((r) => (resolveStatus = r));
  const req = httpRequest({ host: '127.0.0.1', port: i.port, path, agent: false }, (res) => {
    resolveStatus(res.statusCode!);
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      buffer += chunk;
      let end: number;
      while ((end = buffer.indexOf('\n\n')) !== -1) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const event = /^event: (.*)$/m.exec(block)?.[1] ?? 'message';
        const data = /^data: (.*)$/m.exec(block)?.[1];
        events.push({ event, data: data === undefined ? undefined : JSON.parse(data) });
      }
      for (const w of waiters.splice(0)) w();
    });
  });
  req.on('error', () => {});
  req.end();
  cleanup.push(async () => void req.destroy());
  return {
    events,
    status,
    async until(cond) {
      const seen = async () => {
        while (!cond(events.length)) await new Promise<void>((r) => waiters.push(r));
      };
      await within(seen(), { what: `the events awaited on the inspector's event stream (${cond.toString()})` });
    },
    close: () => req.destroy(),
  };
}


describe('inspector: who may ask', () => {
  it('binds 127.0.0.1 and serves everything under /<token>/ only; any other path or token is 403', async () => {
    const i = await inspector({ ports: [0] });
    expect(i.token).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(i.url).toBe(`http://127.0.0.1:${i.port}/${i.token}/`);
    const other = new Inspector({ ports: [0], key: KEY, verified: true, recording: false });
    expect(other.token).not.toBe(i.token);
    const page = await raw(i.port, 'GET', `/${i.token}/`);
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.text).toContain('<script src="app.js" defer></script>');
    // No inline script or style in the page.
    expect(page.text).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>/);
    expect(page.text).not.toMatch(/<style|\sstyle=|\son[a-z]+=/i);
    expectSecurityHeaders(page);
    const js = await raw(i.port, 'GET', `/${i.token}/app.js`);
    expect([js.status, js.headers['content-type']]).toEqual([200, 'text/javascript; charset=utf-8']);
    expect((await raw(i.port, 'GET', `/${i.token}/style.css`)).headers['content-type']).toBe('text/css; charset=utf-8');
    const wrong = `${i.token.slice(0, -1)}${i.token.endsWith('A') ? 'B' : 'A'}`;
    for (const path of ['/', '/app.js', '/events', '/replay', `/${wrong}/`, `/${wrong}/events`, `/${i.token}x/`, `/${i.token.slice(0, -1)}/`, '/favicon.ico', `/x/${i.token}/`, '//', `/${i.token.toUpperCase()}${i.token.toUpperCase() === i.token ? 'x' : ''}/`]) {
      const r = await raw(i.port, 'GET', path);
      expect(r.status, path).toBe(403);
      expectSecurityHeaders(r);
    }
    // A request Node cannot parse gets the same headers.
    const malformed = await new Promise<string>((resolve, reject) => {
      let text = '';
      const socket = connect(i.port, '127.0.0.1', () => socket.write(`GET /${i.token}/ HTTP/1.1\r\nHost: 127.0.0.1:${i.port}\r\nno colon here\r\n\r\n`));
      socket.on('data', (b: Buffer) => (text += b.toString('latin1')));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    expect(malformed).toMatch(/^HTTP\/1\.1 400 /);
    expect(malformed).toContain(`content-security-policy: ${CSP}\r\n`);
    expect(malformed).toContain('x-content-type-options: nosniff\r\n');
    const bare = await raw(i.port, 'GET', `/${i.token}`);
    expect([bare.status, bare.headers.location]).toEqual([308, `/${i.token}/`]);
    expect((await raw(i.port, 'GET', `/${i.token}/nothing`)).status).toBe(404);
  });

  it('is not reachable on the machine’s other addresses', async () => {
    const i = await inspector();
    const outside = Object.values(networkInterfaces())
      .flat()
      .find((a) => a && a.family === 'IPv4' && !a.internal);
    if (!outside) return;
    const err = await new Promise<string>((resolve) => {
      const req = httpRequest({ host: outside.address, port: i.port, path: `/${i.token}/`, agent: false }, () => resolve('answered'));
      req.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
      req.end();
    });
    expect(err).toBe('ECONNREFUSED');
  });

  it('refuses a Host that is not 127.0.0.1:PORT or localhost:PORT (DNS rebinding)', async () => {
    const i = await inspector();
    const page = `/${i.token}/`;
    expect((await raw(i.port, 'GET', page, { host: `localhost:${i.port}` })).status).toBe(200);
    for (const host of ['evil.example', `evil.example:${i.port}`, `127.0.0.1:${i.port + 1}`, '127.0.0.1', `LOCALHOST:${i.port}`, `127.0.0.1:${i.port}.evil.example`, `[::1]:${i.port}`]) {
      const r = await raw(i.port, 'GET', page, { host });
      expect(r.status, host).toBe(403);
      expectSecurityHeaders(r);
      expect((await raw(i.port, 'GET', `/${i.token}/events`, { host })).status, host).toBe(403);
      expect((await action(i, { seq: 1 }, { host })).status, host).toBe(403);
    }
  });

  it('takes actions by POST only, with the token header, the page’s own origin and a JSON body', async () => {
    const i = await inspector();
    i.add(delivery(1, '{"_id":"c1"}'), new CardStates().apply(Buffer.from('{"_id":"c1"}')), { recorded: false });
    const get = await raw(i.port, 'GET', `/${i.token}/replay`);
    expect([get.status, get.headers.allow]).toEqual([405, 'POST']);
    expectSecurityHeaders(get);
    expect((await raw(i.port, 'POST', `/${i.token}/events`, { 'content-type': 'application/json' }, '{}')).status).toBe(405);
    const noHeader = await raw(i.port, 'POST', `/${i.token}/replay`, { 'content-type': 'application/json' }, '{"seq":1}');
    expect(noHeader.status).toBe(403);
    expectSecurityHeaders(noHeader);
    expect((await action(i, { seq: 1 }, { 'x-cardboard-token': `${i.token}x` })).status).toBe(403);
    expect((await action(i, { seq: 1 }, { 'x-cardboard-token': '' })).status).toBe(403);
    for (const origin of ['http://evil.example', `http://127.0.0.1:${i.port + 1}`, `https://127.0.0.1:${i.port}`, 'null']) {
      expect((await action(i, { seq: 1 }, { origin })).status, origin).toBe(403);
    }
    // The page's own origin passes the checks: 409 because there is nowhere to replay to.
    expect((await action(i, { seq: 1 }, { origin: `http://127.0.0.1:${i.port}` })).status).toBe(409);
    expect((await action(i, { seq: 1 }, { origin: `http://localhost:${i.port}`, host: `localhost:${i.port}` })).status).toBe(409);
    // A cross-site form can only send these types: refused before the body is read.
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/jsonp']) {
      const r = await action(i, { seq: 1 }, { 'content-type': type });
      expect(r.status, type).toBe(415);
      expectSecurityHeaders(r);
    }
    expect((await action(i, { seq: 1 }, { 'content-type': 'application/json; charset=utf-8' })).status).toBe(409);
    const notJson = await raw(i.port, 'POST', `/${i.token}/replay`, { 'content-type': 'application/json', 'x-cardboard-token': i.token }, '{seq:1');
    expect(notJson.status).toBe(400);
    expect((await action(i, { seq: '1' })).status).toBe(400);
    expect((await action(i, [1])).status).toBe(400);
  });
});

describe('inspector: what it keeps', () => {
  it('keeps the last 1000 deliveries: the 1001st drops the first, whose detail and replay answer 410', async () => {
    const i = await inspector({ forwardTo: 'http://127.0.0.1:9/hooks' });
    const states = new CardStates();
    for (let seq = 1; seq <= 1001; seq++) {
      const body = Buffer.from(`{"_id":"c${seq}","Name":"n${seq}"}`);
      i.add(delivery(seq, body), states.apply(body), { recorded: false });
    }
    expect(i.counts).toMatchObject({ kept: 1000, dropped: 1 });
    const gone = await raw(i.port, 'GET', `/${i.token}/deliveries/1`);
    expect(gone.status).toBe(410);
    expect((JSON.parse(gone.text) as { error: string }).error).toMatch(/#1 is no longer kept: the inspector keeps the last 1000 deliveries/);
    expectSecurityHeaders(gone);
    expect((await action(i, { seq: 1 })).status).toBe(410);
    expect((await raw(i.port, 'GET', `/${i.token}/deliveries/2`)).status).toBe(200);
    expect((await raw(i.port, 'GET', `/${i.token}/deliveries/1002`)).status).toBe(404);
    expect((await raw(i.port, 'GET', `/${i.token}/deliveries/0`)).status).toBe(404);
    expect((await raw(i.port, 'GET', `/${i.token}/deliveries/abc`)).status).toBe(404);
    expect((await action(i, { seq: 5000 })).status).toBe(404);
    const stream = openEvents(i);
    await stream.until(() => stream.events.some((e) => e.event === 'ready'));
    const entries = stream.events.filter((e) => e.event === 'entry').map((e) => (e.data as { seq: number }).seq);
    expect(entries).toEqual(Array.from({ length: 1000 }, (_, n) => n + 2));
    expect(stream.events.at(-1)).toEqual({ event: 'ready', data: { forwardTo: 'http://127.0.0.1:9/hooks', recording: false, kept: 1000, dropped: 1 } });
  });

  it('keeps at most 32 MiB of bodies, oldest dropped first; a small cap keeps the newest however large', async () => {
    const i = await inspector();
    const eight = Buffer.alloc(8 * 1024 * 1024, 0x61);
    for (let seq = 1; seq <= 5; seq++) i.add(delivery(seq, eight), { event: 'other', changes: [], unread: true }, { recorded: false });
    expect(i.counts).toEqual({ kept: 4, dropped: 1, bytes: 32 * 1024 * 1024 });
    expect((await raw(i.port, 'GET', `/${i.token}/deliveries/1`)).status).toBe(410);
    const detail = JSON.parse((await raw(i.port, 'GET', `/${i.token}/deliveries/5`)).text) as { body: string; bodyTruncated?: boolean; size: number };
    expect([detail.body.length, detail.bodyTruncated, detail.size]).toEqual([1024 * 1024, true, 8 * 1024 * 1024]);

    const small = await inspector({ maxBytes: 1000 });
    for (let seq = 1; seq <= 3; seq++) small.add(delivery(seq, 'x'.repeat(400)), { event: 'other', changes: [] }, { recorded: false });
    expect(small.counts).toEqual({ kept: 2, dropped: 1, bytes: 800 });
    small.add(delivery(4, 'y'.repeat(5000)), { event: 'other', changes: [] }, { recorded: false });
    expect(small.counts).toEqual({ kept: 1, dropped: 3, bytes: 5000 });
  });

  it('shows one delivery with its headers (key masked), parsed body and change', async () => {
    const i = await inspector();
    const states = new CardStates();
    const first = Buffer.from('{"_id":"c1","Status":"Open"}');
    const second = Buffer.from('{"_id":"c1","Status":"Done"}');
    i.add(delivery(1, first), states.apply(first), { recorded: true });
    // Parsed, so `__proto__` is an own key (a literal would set the prototype).
    i.add(delivery(2, second, JSON.parse('{"__proto__":"hp"}') as Record<string, string>), states.apply(second), { recorded: false });
    i.add(delivery(3, 'plain text'), states.apply(Buffer.from('plain text')), { recorded: false });
    const d = JSON.parse((await raw(i.port, 'GET', `/${i.token}/deliveries/2`)).text) as Record<string, unknown>;
    expect(d).toEqual({
      seq: 2,
      receivedAt: '2026-11-26T06:00:00.002Z',
      method: 'POST',
      path: '/',
      headers: JSON.parse(`{"Content-Type":"application/json","x-signingKey":"***","User-Agent":"svc","__proto__":"hp"}`),
      body: { _id: 'c1', Status: 'Done' },
      size: second.length,
      change: { event: 'changed', cardId: 'c1', cardName: 'Done', changes: [{ field: 'Status', before: 'Open', after: 'Done' }] },
    });
    expect(JSON.parse((await raw(i.port, 'GET', `/${i.token}/deliveries/3`)).text)).toMatchObject({ body: 'plain text', change: { event: 'other' } });
  });
});

describe('inspector: the event stream', () => {
  it('sends the kept entries oldest first, then ready, then live entries, forwards and stats', async () => {
    const i = await inspector({ forwardTo: undefined, recording: true, verified: false });
    const states = new CardStates();
    const bodies = ['{"_id":"a","Name":"A"}', '{"_id":"b","Name":"B"}', '{"_id":"a","Name":"A2"}'].map((b) => Buffer.from(b));
    i.add(delivery(1, bodies[0]!), states.apply(bodies[0]!), { recorded: true });
    i.add(delivery(2, bodies[1]!), states.apply(bodies[1]!), { recorded: true });
    const stream = openEvents(i);
    expect(await stream.status).toBe(200);
    await stream.until(() => stream.events.some((e) => e.event === 'ready'));
    expect(stream.events.map((e) => e.event)).toEqual(['entry', 'entry', 'ready']);
    expect(stream.events[0]!.data).toEqual({
      seq: 1,
      receivedAt: '2026-11-26T06:00:00.001Z',
      method: 'POST',
      path: '/',
      size: bodies[0]!.length,
      verified: false,
      recorded: true,
      change: { event: 'new', cardId: 'a', cardName: 'A', changes: [{ field: 'Name', after: 'A' }] },
      cardName: 'A',
      preview: '{"_id":"a","Name":"A"}',
    });
    expect(stream.events[2]!.data).toEqual({ forwardTo: null, recording: true, kept: 2, dropped: 0 });
    i.add(delivery(3, bodies[2]!), states.apply(bodies[2]!), { recorded: false });
    const fwd: ForwardEvent = { type: 'forward', seq: 3, url: 'http://127.0.0.1:3000/', attempt: 2, ok: false, answer: { ms: 12.345, body: Buffer.alloc(0), error: 'ECONNREFUSED' }, retryInMs: 100, pending: 1 };
    i.forward(fwd);
    i.forward({ ...fwd, attempt: 3, ok: true, answer: { status: 200, ms: 3.04, body: Buffer.from('ok') } });
    i.stats(3, 1);
    await stream.until(() => stream.events.length >= 7);
    expect(stream.events.slice(3)).toEqual([
      { event: 'entry', data: expect.objectContaining({ seq: 3, recorded: false, change: { event: 'changed', cardId: 'a', cardName: 'A2', changes: [{ field: 'Name', before: 'A', after: 'A2' }] } }) },
      { event: 'forward', data: { seq: 3, url: 'http://127.0.0.1:3000/', attempt: 2, ok: false, status: null, ms: 12.3, error: 'ECONNREFUSED' } },
      { event: 'forward', data: { seq: 3, url: 'http://127.0.0.1:3000/', attempt: 3, ok: true, status: 200, ms: 3 } },
      { event: 'stats', data: { delivered: 3, refused: 1 } },
    ]);
    // A later connection gets the entry with its last forward, then ready and the last stats.
    const again = openEvents(i);
    await again.until(() => again.events.some((e) => e.event === 'stats'));
    expect(again.events.map((e) => e.event)).toEqual(['entry', 'entry', 'entry', 'ready', 'stats']);
    expect(again.events[2]!.data).toMatchObject({ seq: 3, forward: { attempt: 3, ok: true, status: 200, ms: 3 } });
  });

  it('previews the first 4096 characters of a body, and stop() ends open streams', async () => {
    const i = await inspector();
    i.add(delivery(1, `"${'é'.repeat(5000)}"`), { event: 'other', changes: [] }, { recorded: false });
    const stream = openEvents(i);
    await stream.until(() => stream.events.some((e) => e.event === 'ready'));
    expect((stream.events[0]!.data as { preview: string }).preview).toBe(`"${'é'.repeat(4095)}`);
    await i.stop();
    expect((await new Promise<string>((resolve) => {
      const req = httpRequest({ host: '127.0.0.1', port: i.port, path: `/${i.token}/`, agent: false }, () => resolve('answered'));
      req.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? ''));
      req.end();
    }))).toBe('ECONNREFUSED');
  });
});

describe('inspector: replay', () => {
  it('re-sends the exact bytes with x-signingKey set to the key, to the URL given or else --forward-to', async () => {
    const app = await receiver(cleanup);
    const fallback = await receiver(cleanup);
    const i = await inspector({ forwardTo: fallback.url });
    const body = Buffer.from([0x7b, 0x22, 0x5f, 0x69, 0x64, 0x22, 0x3a, 0x22, 0xc3, 0xa9, 0x22, 0x7d, 0x0a, 0xff]);
    i.add(delivery(7, body, { 'X-Custom': 'kept' }), new CardStates().apply(body), { recorded: false });
    const r = await action(i, { seq: 7, url: app.url });
    expect(r.status).toBe(200);
    expectSecurityHeaders(r);
    const answer = JSON.parse(r.text) as Record<string, unknown>;
    expect(answer).toMatchObject({ url: app.url, status: 202, body: 'thanks 1' });
    expect(typeof answer.ms).toBe('number');
    expect(app.got).toHaveLength(1);
    expect(app.got[0]!.body.equals(body)).toBe(true);
    expect(app.got[0]!.method).toBe('POST');
    expect(app.got[0]!.headers['x-signingkey']).toBe(KEY);
    expect(app.got[0]!.headers['x-custom']).toBe('kept');
    expect(app.got[0]!.headers['content-type']).toBe('application/json');
    expect(JSON.parse((await action(i, { seq: 7 })).text)).toMatchObject({ url: fallback.url, status: 202 });
    expect(fallback.got[0]!.body.equals(body)).toBe(true);
    // A receiver that is not there: an answer with the error, not a failure of the request.
    const down = JSON.parse((await action(i, { seq: 7, url: 'http://127.0.0.1:1/x' })).text) as Record<string, unknown>;
    expect(down).toMatchObject({ url: 'http://127.0.0.1:1/x', status: null, error: 'ECONNREFUSED', body: '' });
  });

  it('answers 409 with nowhere to send, 400 for a URL that is refused or the inspector itself', async () => {
    const i = await inspector({ key: undefined });
    i.add(delivery(1, '{}'), { event: 'other', changes: [] }, { recorded: false });
    const none = await action(i, { seq: 1 });
    expect(none.status).toBe(409);
    expect(none.text).toContain('--forward-to');
    const cases: Array<[string, RegExp]> = [
      ['ftp://127.0.0.1/x', /only http:\/\/ and https:\/\/ URLs/],
      ['not a url', /not a URL/],
      ['http://example.com/hooks', /Refusing plain http:\/\/ to example\.com/],
      ['http://192.0.2.1:9/hooks', /Refusing plain http:\/\/ to 192\.0\.2\.1:9/],
      [`http://127.0.0.1:${i.port}/${i.token}/replay`, /is this inspector itself/],
      [`http://localhost:${i.port}/`, /is this inspector itself/],
    ];
    for (const [url, message] of cases) {
      const r = await action(i, { seq: 1, url });
      expect(r.status, url).toBe(400);
      expect((JSON.parse(r.text) as { error: string }).error, url).toMatch(message);
    }
    // With --insecure the same URL is tried (TEST-NET-1: nothing answers; the short timeout ends the try).
    const insecure = await inspector({ insecure: true, replayTimeout: durationOf(300) });
    insecure.add(delivery(1, '{}'), { event: 'other', changes: [] }, { recorded: false });
    const tried = await action(insecure, { seq: 1, url: 'http://192.0.2.1:9/hooks' });
    expect(tried.status).toBe(200);
    expect(JSON.parse(tried.text)).toMatchObject({ url: 'http://192.0.2.1:9/hooks', status: null });
  });

  it('sends no x-signingKey when there is no key (--no-verify)', async () => {
    const app = await receiver(cleanup);
    const i = await inspector({ key: undefined, verified: false });
    i.add(delivery(1, '{"a":1}'), { event: 'other', changes: [] }, { recorded: false });
    expect((await action(i, { seq: 1, url: app.url })).status).toBe(200);
    expect(app.got[0]!.headers['x-signingkey']).toBeUndefined();
  });
});

describe('inspector: ports', () => {
  it('takes the next port of its list when one is in use, and fails with EADDRINUSE when none is free', async () => {
    const first = await inspector();
    const second = await inspector({ ports: [first.port, 0] });
    expect(second.port).not.toBe(first.port);
    const third = new Inspector({ ports: [first.port], key: KEY, verified: true, recording: false });
    await expect(third.start()).rejects.toMatchObject({ code: 'EADDRINUSE' });
    await third.stop();
  });
});
