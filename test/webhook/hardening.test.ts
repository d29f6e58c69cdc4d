import { once } from 'node:events';
import { readFileSync, statSync } from 'node:fs';
import { createServer, request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { type ConnectionLimits, DEFAULT_LIMITS, reachesListener, timeoutsFromEnv } from '../../src/webhook/limits.js';
import { Listener, type ListenerEvent } from '../../src/webhook/listener.js';
import { RecordFile } from '../../src/webhook/record-file.js';
import { tempDir } from '../helpers/cli.js';
import { waitFor, within } from '../helpers/wait.js';
import { post, TestApp } from './helpers.js';

const KEY = 'sk-hardening-0123456789';
let cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
});

interface Started {
  listener: Listener;
  url: string;
  port: number;
  events: ListenerEvent[];
  record: RecordFile;
  recordPath: string;
}

async function start(opts: { limits?: Partial<ConnectionLimits>; forward?: string; secrets?: string[]; recordPath?: string } = {}): Promise<Started> {
  const events: ListenerEvent[] = [];
  const recordPath = opts.recordPath ?? join(tempDir(), 'r.jsonl');
  const record = new RecordFile(recordPath);
  const listener = new Listener({
    host: '127.0.0.1',
    port: 0,
    path: '/',
    key: KEY,
    secrets: opts.secrets,
    maxBody: 1024 * 1024,
    record,
    limits: opts.limits,
    // Long enough that no answer on a loaded machine times out (a timed-out forward is sent again: a duplicate).
    forward: opts.forward ? { url: opts.forward, timeout: { ms: 30_000, text: '30s' }, retryCapMs: 20 } : undefined,
    onEvent: (e) => events.push(e),
  });
  const url = await listener.start();
  cleanup.push(() => listener.stop());
  return { listener, url, port: Number(new URL(url).port), events, record, recordPath };
}

/** The deliveries' lines of a record file: a forward try's entry (`{"forward":…}`) is not one. */
function lines(path: string): Array<Record<string, unknown>> {
  return readFileSync(path, 'utf8').split('\n').filter((l) => l.startsWith('{"seq":')).map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** A raw TCP connection to the listener; `closed` resolves when the server closes it. */
async function rawSocket(port: number): Promise<{ socket: Socket; closed: Promise<void> }> {
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => {});
  // Not events.once: it rejects on 'error', and a peer that closes while we still write resets the socket
  // (ECONNRESET on Node 24); closed is closed, however it came.
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  await once(socket, 'connect');
  cleanup.push(async () => {
    socket.destroy();
  });
  return { socket, closed };
}

describe('only POST is a delivery', () => {
  it('answers 405 with Allow: POST to GET, HEAD, PUT, DELETE, OPTIONS and PATCH, even with the right key; nothing is recorded or forwarded', async () => {
    const app = new TestApp();
    await app.up();
    cleanup.push(() => app.down());
    const s = await start({ forward: app.url });
    for (const method of ['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS', 'PATCH']) {
      const res = await request(s.url, { method: method as 'GET', headers: { 'x-signingKey': KEY }, body: method === 'GET' || method === 'HEAD' ? undefined : '{"_id":"x"}' });
      await res.body.dump();
      expect(res.statusCode, method).toBe(405);
      expect(res.headers.allow, method).toBe('POST');
    }
    expect(await post(s.url, '{"_id":"real"}', KEY)).toBe(200);
    await app.waitForCompleted(1);
    expect(s.events.filter((e) => e.type === 'delivery')).toHaveLength(1);
    expect(s.listener.stats.rejected[405]).toBe(6);
    expect(lines(s.recordPath).map((l) => l.body)).toEqual([{ _id: 'real' }]);
    expect(app.received.map((r) => r.method)).toEqual(['POST']);
  });
});

describe('connection cap and timeouts', () => {
  it('at the cap, a new connection closes the oldest idle one: idle sockets cannot starve a delivery', async () => {
    // Timeouts left at their defaults (10-30 s): only the cap can make room here.
    const s = await start({ limits: { maxConnections: 4 } });
    const idle = [];
    for (let i = 0; i < 6; i++) idle.push(await rawSocket(s.port));
    // 6 idle sockets against a cap of 4: the two oldest were closed by the server.
    await Promise.all([idle[0]!.closed, idle[1]!.closed]);
    expect(await post(s.url, '{"_id":"through"}', KEY)).toBe(200);
    expect(lines(s.recordPath).map((l) => l.body)).toEqual([{ _id: 'through' }]);
  });

  it('when every connection is busy, a new one is closed at once, not left hanging', async () => {
    // Timeouts past the wait below: only the cap can close a connection here.
    const s = await start({ limits: { maxConnections: 2, idleMs: 100_000, headersMs: 100_000, requestMs: 100_000 } });
    const busy = [await rawSocket(s.port), await rawSocket(s.port)];
    const answers = busy.map(({ socket }) => {
      let text = '';
      socket.on('data', (b: Buffer) => (text += b.toString('latin1')));
      return () => text;
    });
    // Each holds a request in progress, its body still to come: the listener's 100 Continue says it has the
    // request in hand (it invites the body only of a request it is handling).
    for (const b of busy) b.socket.write(`POST / HTTP/1.1\r\nHost: x\r\nx-signingKey: ${KEY}\r\nExpect: 100-continue\r\nContent-Length: 10\r\n\r\n`);
    await waitFor(() => answers.every((a) => a().startsWith('HTTP/1.1 100 Continue\r\n\r\n')), { what: '100 Continue on both busy connections' });
    const extra = await rawSocket(s.port);
    let extraGot = '';
    extra.socket.on('data', (b: Buffer) => (extraGot += b.toString('latin1')));
    await within(extra.closed, { what: 'the connection over the cap to be closed' });
    expect(extraGot).toBe('');
    // The busy ones were not disturbed: each body completes its delivery.
    busy.forEach((b, i) => b.socket.write(`{"_id":${i}} `));
    await waitFor(() => answers.every((a) => /\r\n\r\nHTTP\/1\.1 200 /.test(a())), { what: 'the 200s of the busy connections' });
    expect(lines(s.recordPath).map((l) => l.body)).toEqual(expect.arrayContaining([{ _id: 0 }, { _id: 1 }]));
    expect(s.listener.stats.delivered).toBe(2);
  });

  // Node checks the headers and request deadlines every 30 s by default, so a deadline of 1 s would answer
  // 408 only at the next check, about 30 s after the server started. The listener checks them every quarter
  // of the headers timeout: the 408 comes within seconds. The deadline below is long enough for a loaded
  // machine and far short of Node's first check.
  it('checks its deadlines often: a trickle of headers past 1 s is answered 408 within seconds, not at Node\'s 30 s check; a keep-alive connection idle after its answer is closed', async () => {
    const long = 20_000;
    const headers = await start({ limits: { idleMs: long, headersMs: 1000, requestMs: long } });
    const c = await rawSocket(headers.port);
    let answer = '';
    c.socket.on('data', (b: Buffer) => (answer += b.toString('latin1')));
    c.socket.write('POST / HTTP/1.1\r\nHost: x\r\n');
    const drip = setInterval(() => c.socket.write('x'), 50);
    cleanup.push(async () => clearInterval(drip));
    await within(c.closed, { what: () => `the 408 of a 1 s headers deadline (got ${JSON.stringify(answer)})`, timeoutMs: 12_000 });
    clearInterval(drip);
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);

    const idle = await start({ limits: { idleMs: 1000, headersMs: long, requestMs: long } });
    const k = await rawSocket(idle.port);
    let got = '';
    k.socket.on('data', (b: Buffer) => (got += b.toString('latin1')));
    const body = '{"_id":"kept"}';
    k.socket.write(`POST / HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\nx-signingKey: ${KEY}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
    await waitFor(() => got.startsWith('HTTP/1.1 200 '), { what: () => `the 200 (got ${JSON.stringify(got)})` });
    expect(got).not.toMatch(/connection: close/i);
    await within(k.closed, { what: 'the idle keep-alive connection to be closed', timeoutMs: 12_000 });
    expect(got.match(/HTTP\/1\.1 /g)).toHaveLength(1);
    expect(lines(idle.recordPath).map((l) => l.body)).toEqual([{ _id: 'kept' }]);
  });

  // Each connection below meets one timeout of 1-1.5 s; the others are 20 s, so a loaded machine (a
  // drip late by seconds, a timer fired late) cannot make a different one close it, and how it was
  // closed tells which did: the idle timeout closes without a word, a deadline answers 408.
  it('closes a connection that sends nothing (idle timeout), and answers 408 to one trickling its headers or its body past its deadline; nothing is recorded', async () => {
    const long = 20_000;
    const idle = await start({ limits: { idleMs: 1000, headersMs: long, requestMs: long } });
    const headers = await start({ limits: { idleMs: long, headersMs: 1000, requestMs: long } });
    const body = await start({ limits: { idleMs: long, headersMs: 1500, requestMs: 1500 } });
    const watch = async (port: number, first: string, drip: string) => {
      const c = await rawSocket(port);
      let answer = '';
      let timer: NodeJS.Timeout | undefined;
      c.socket.on('data', (b: Buffer) => {
        answer += b.toString();
        // Answered: no more drips into a connection the server is closing (each would draw a reset).
        clearInterval(timer);
      });
      if (first !== '') c.socket.write(first);
      // A byte every 50 ms: never idle for long, and never done (the rest would take minutes).
      if (drip !== '') timer = setInterval(() => c.socket.write(drip), 50);
      cleanup.push(async () => clearInterval(timer));
      // Far short of what Node's own timeouts would take (20 s here, and a check every 30 s).
      await within(c.closed, { what: () => `port ${port} to close the connection (got ${JSON.stringify(answer)})`, timeoutMs: 12_000 });
      clearInterval(timer);
      return answer;
    };
    const [silent, slowHeaders, slowBody] = await Promise.all([
      watch(idle.port, '', ''),
      watch(headers.port, 'POST / HTTP/1.1\r\nHost: x\r\n', 'x'),
      watch(body.port, `POST / HTTP/1.1\r\nHost: x\r\nx-signingKey: ${KEY}\r\nContent-Length: 100000\r\n\r\n`, 'x'),
    ]);
    expect(silent).toBe('');
    expect(slowHeaders).toMatch(/^HTTP\/1\.1 408 /);
    expect(slowBody).toMatch(/^HTTP\/1\.1 408 /);
    for (const s of [idle, headers, body]) expect(readFileSync(s.recordPath, 'utf8')).toBe('');
  });

  it('reads its timeouts from CARDBOARD_WEBHOOK_TIMEOUTS over the defaults, and refuses a bad one', () => {
    expect(timeoutsFromEnv('idle=200ms, request=2s')).toEqual({ ...DEFAULT_LIMITS, idleMs: 200, headersMs: 2000, requestMs: 2000 });
    expect(timeoutsFromEnv(undefined)).toEqual(DEFAULT_LIMITS);
    expect(() => timeoutsFromEnv('idle=5')).toThrow(/has no unit/);
    expect(() => timeoutsFromEnv('nap=5s')).toThrow(/unknown timeout "nap"/);
    expect(() => timeoutsFromEnv('headers=40s')).toThrow(/cannot be longer than request/);
    expect(DEFAULT_LIMITS.requestMs).toBeLessThan(60_000);
  });
});

describe('forwarding to itself', () => {
  it('knows its own address: loopback names, 0.0.0.0 and the wildcard are the same place, other ports and hosts are not', () => {
    expect(reachesListener('http://localhost:8787/', '127.0.0.1', 8787)).toBe(true);
    expect(reachesListener('http://127.0.0.1:8787/hooks', '127.0.0.1', 8787)).toBe(true);
    expect(reachesListener('http://[::1]:8787/', '127.0.0.1', 8787)).toBe(true);
    expect(reachesListener('http://0.0.0.0:8787/', '127.0.0.1', 8787)).toBe(true);
    expect(reachesListener('http://127.0.0.1:8787/', '0.0.0.0', 8787)).toBe(true);
    expect(reachesListener('http://localhost:8787/', '::', 8787)).toBe(true);
    expect(reachesListener('http://localhost:80/', 'localhost', 80)).toBe(true);
    expect(reachesListener('http://localhost/', '127.0.0.1', 80)).toBe(true);
    expect(reachesListener('http://localhost:3000/', '127.0.0.1', 8787)).toBe(false);
    expect(reachesListener('http://example.com:8787/', '127.0.0.1', 8787)).toBe(false);
    expect(reachesListener('http://127.0.0.1:8787/', '192.0.2.7', 8787)).toBe(false);
  });

  it('a delivery that comes back through a proxy is answered 200, recorded once, forwarded once, and warned about', async () => {
    let proxied = 0;
    let listenerUrl = '';
    // A proxy in front of the "app" that is in fact pointed back at the listener.
    const proxy = createServer((req, res) => {
      proxied++;
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const headers = { ...req.headers };
        delete headers.host;
        const back = httpRequest(listenerUrl, { method: req.method, headers }, (r) => {
          r.resume();
          r.on('end', () => res.writeHead(r.statusCode ?? 502).end());
        });
        back.end(Buffer.concat(chunks));
      });
    });
    proxy.listen(0, '127.0.0.1');
    await once(proxy, 'listening');
    cleanup.push(() => new Promise((r) => proxy.close(r)));
    const s = await start({ forward: `http://127.0.0.1:${(proxy.address() as { port: number }).port}/` });
    listenerUrl = s.url;
    expect(await post(s.url, '{"_id":"once"}', KEY)).toBe(200);
    await waitFor(() => s.events.some((e) => e.type === 'looped') && s.events.some((e) => e.type === 'forward'), { what: "the 'looped' and 'forward' events" });
    await s.listener.stop();
    expect(proxied).toBe(1);
    expect(lines(s.recordPath).map((l) => l.seq)).toEqual([1]);
    expect(s.events.filter((e) => e.type === 'delivery')).toHaveLength(1);
    expect(s.events.find((e) => e.type === 'forward')).toMatchObject({ ok: true, seq: 1 });
  });
});

describe('secrets in the record file', () => {
  it('holds neither the signing key nor the token, in headers or body; a record file it creates is 0600', async () => {
    const token = 'tok-0123456789-secret';
    const recordPath = join(tempDir(), 'r.jsonl');
    const app = new TestApp();
    await app.up();
    cleanup.push(() => app.down());
    const s = await start({ recordPath, secrets: [token], forward: app.url });
    const body = JSON.stringify({ _id: 'leak', Notes: `key ${KEY} and token ${token}` });
    expect(await post(s.url, body, KEY, { authorization: `Bearer ${token}`, 'x-echo': KEY })).toBe(200);
    await app.waitForCompleted(1);
    await s.listener.stop();
    const text = readFileSync(recordPath, 'utf8');
    const [line] = lines(recordPath);
    expect(text).not.toContain(KEY);
    expect(text).not.toContain(token);
    expect(Buffer.from(String(line!.bodyBase64), 'base64').toString()).toBe(JSON.stringify({ _id: 'leak', Notes: 'key *** and token ***' }));
    expect(line!.headers).toMatchObject({ 'x-signingKey': '***', authorization: 'Bearer ***', 'x-echo': '***' });
    expect(statSync(recordPath).mode & 0o777).toBe(0o600);
    // The app gets the key it needs in x-signingKey, but the body as recorded.
    expect(app.received[0]!.headers['x-signingkey']).toBe(KEY);
    expect(app.received[0]!.body.toString()).not.toContain(token);
  });
});
