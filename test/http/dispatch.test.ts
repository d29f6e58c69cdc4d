import { getEventListeners } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, Pool } from 'undici';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AbortWatch, Deadlines, dispatchRequest, type RawRequest } from '../../src/http/dispatch.js';
import { waitFor } from '../helpers/wait.js';

const servers: Server[] = [];
const dispatchers: Array<Agent | Pool> = [];

/** A server on port 0; `handle` answers (or holds) each request; `seen` counts requests that arrived. */
async function serve(handle: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ origin: string; seen: string[] }> {
  const seen: string[] = [];
  const server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    handle(req, res);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

function agent(): Agent {
  const a = new Agent();
  dispatchers.push(a);
  return a;
}

const request = (origin: string, extra: Partial<RawRequest> = {}): RawRequest => ({
  origin,
  path: '/x',
  method: 'GET',
  headers: { 'x-token': 'tok' },
  headersTimeout: 5000,
  bodyTimeout: 5000,
  ...extra,
});

afterEach(async () => {
  await Promise.all(dispatchers.splice(0).map((d) => d.destroy()));
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

describe('dispatchRequest (undici controller handler)', () => {
  it('gives the status, lower-case headers with repeats as arrays, and the whole body as one Buffer', async () => {
    const srv = await serve((_req, res) => {
      res.writeHead(429, [
        ['Set-Cookie', 'a=1'],
        ['Set-Cookie', 'b=2'],
        ['Retry-After', '3'],
        ['Retry-After', '7'],
        ['Content-Type', 'application/json'],
      ]);
      res.write('{"part":');
      setTimeout(() => res.end('"two"}'), 20);
    });
    const res = await dispatchRequest(agent(), request(srv.origin, { method: 'POST', body: '{}' }));
    expect(res.statusCode).toBe(429);
    expect(res.headers['set-cookie']).toEqual(['a=1', 'b=2']);
    expect(res.headers['retry-after']).toEqual(['3', '7']);
    expect(res.headers['content-type']).toBe('application/json');
    expect(Buffer.isBuffer(res.body)).toBe(true);
    expect(res.body.toString()).toBe('{"part":"two"}');
    expect(srv.seen).toEqual(['POST /x']);
  });

  it('never sends a request whose signal was aborted before the call, and rejects with its reason', async () => {
    const srv = await serve((_req, res) => res.end('ok'));
    const ac = new AbortController();
    const reason = new Error('stopped before');
    ac.abort(reason);
    await expect(dispatchRequest(agent(), request(srv.origin, { signal: ac.signal }))).rejects.toBe(reason);
    // A later request on the same server proves it was listening: only that one arrived.
    await dispatchRequest(agent(), request(srv.origin, { path: '/after' }));
    expect(srv.seen).toEqual(['GET /after']);
  });

  it('rejects at once when aborted while waiting for a connection, and the request is never sent', async () => {
    let release: (() => void) | undefined;
    const srv = await serve((req, res) => {
      if (req.url === '/hold') release = () => res.end('held');
      else res.end('ok');
    });
    const pool = new Pool(srv.origin, { connections: 1, pipelining: 1 });
    dispatchers.push(pool);
    const first = dispatchRequest(pool, request(srv.origin, { path: '/hold' }));
    await waitFor(() => release, { what: 'the server to hold /hold' });
    const ac = new AbortController();
    const queued = dispatchRequest(pool, request(srv.origin, { path: '/queued', signal: ac.signal }));
    const reason = new Error('stopped while queued');
    ac.abort(reason);
    await expect(queued).rejects.toBe(reason);
    release!();
    expect((await first).body.toString()).toBe('held');
    await dispatchRequest(pool, request(srv.origin, { path: '/after' }));
    expect(srv.seen).toEqual(['GET /hold', 'GET /after']);
  });

  it("with the client's AbortWatch, one listener on the signal ends every request in flight, and finished ones are let go", async () => {
    const held = new Map<string, ServerResponse>();
    const srv = await serve((req, res) => {
      if (req.url === '/quick') res.end('ok');
      else held.set(req.url!, res);
    });
    const ac = new AbortController();
    const watch = new AbortWatch();
    const d = agent();
    const quick = await dispatchRequest(d, request(srv.origin, { path: '/quick', signal: ac.signal, watch }));
    expect(quick.body.toString()).toBe('ok');
    const paths = ['/s0', '/s1', '/s2', '/s3', '/s4'];
    const slow = paths.map((path) => dispatchRequest(d, request(srv.origin, { path, signal: ac.signal, watch })));
    await waitFor(() => held.size === paths.length, { what: `the server to hold ${paths.length} requests` });
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(1);
    // Two end before the abort, the newest and one in the middle: the others must still be reached by it.
    held.get('/s4')!.end('four');
    held.get('/s2')!.end('two');
    expect((await slow[4]).body.toString()).toBe('four');
    expect((await slow[2]).body.toString()).toBe('two');
    const reason = new Error('stop now');
    const cutOff: number[] = [];
    for (const i of [0, 1, 3]) slow[i]!.catch(() => cutOff.push(i));
    ac.abort(reason);
    for (const i of [0, 1, 3]) await expect(slow[i]).rejects.toBe(reason);
    // In the order they started (an import's rows are cut off, and so listed, in file order).
    expect(cutOff).toEqual([0, 1, 3]);
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0);
    // Each request still held was cut off: the server sees its connection close.
    await Promise.all([0, 1, 3].map((i) => held.get(paths[i]!)!).map((res) => (res.closed ? undefined : new Promise((r) => res.once('close', r)))));
  });

  it('stops mid-body on abort: rejects with the reason and closes the connection', async () => {
    let closed: Promise<void> | undefined;
    let sentPart: (() => void) | undefined;
    const partSent = new Promise<void>((r) => {
      sentPart = r;
    });
    const srv = await serve((_req, res) => {
      closed = new Promise((r) => res.on('close', () => r()));
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('first half, then silence', () => sentPart!());
    });
    const ac = new AbortController();
    const pending = dispatchRequest(agent(), request(srv.origin, { signal: ac.signal }));
    await partSent;
    await new Promise((r) => setTimeout(r, 20));
    const reason = new Error('stopped mid-body');
    ac.abort(reason);
    await expect(pending).rejects.toBe(reason);
    await closed;
    expect(srv.seen).toEqual(['GET /x']);
  });

  const keepers = [
    ['its own timer', () => undefined],
    ["the client's Deadlines", () => new Deadlines()],
  ] as const;

  it.each(keepers)('a deadline kept by %s bounds the whole answer: a body trickled within bodyTimeout still ends, and the connection closes', async (_, deadlines) => {
    let closed: Promise<void> | undefined;
    let bytes = 0;
    const srv = await serve((_req, res) => {
      closed = new Promise((r) => res.on('close', () => r()));
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '1000' });
      // One byte every 10 ms: each gap far below bodyTimeout, the whole body 10 s. The deadline (3 s) leaves
      // a busy machine time to deliver the request before it ends the answer.
      const timer = setInterval(() => {
        if (res.destroyed) return clearInterval(timer);
        bytes++;
        res.write('x');
      }, 10);
      res.on('close', () => clearInterval(timer));
    });
    const err = await dispatchRequest(agent(), request(srv.origin, { bodyTimeout: 5000, deadlineMs: 3000, deadlines: deadlines() })).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'ERR_ANSWER_TIMEOUT' });
    await closed;
    expect(bytes).toBeLessThan(1000);
    expect(srv.seen).toEqual(['GET /x']);
  });

  it.each(keepers)('a deadline kept by %s passed while waiting for a connection: not sent (a connect timeout), and never sent later', async (_, deadlines) => {
    let release: (() => void) | undefined;
    const srv = await serve((req, res) => {
      if (req.url === '/hold') release = () => res.end('held');
      else res.end('ok');
    });
    const pool = new Pool(srv.origin, { connections: 1, pipelining: 1 });
    dispatchers.push(pool);
    const first = dispatchRequest(pool, request(srv.origin, { path: '/hold' }));
    await waitFor(() => release, { what: 'the server to hold /hold' });
    await expect(dispatchRequest(pool, request(srv.origin, { path: '/queued', deadlineMs: 30, deadlines: deadlines() }))).rejects.toMatchObject({ code: 'UND_ERR_CONNECT_TIMEOUT' });
    release!();
    expect((await first).body.toString()).toBe('held');
    await dispatchRequest(pool, request(srv.origin, { path: '/after' }));
    expect(srv.seen).toEqual(['GET /hold', 'GET /after']);
  });

  it("keeps undici's error codes: refused connection and headers timeout", async () => {
    const srv = await serve(() => {});
    await expect(dispatchRequest(agent(), request(srv.origin, { headersTimeout: 100 }))).rejects.toMatchObject({ code: 'UND_ERR_HEADERS_TIMEOUT' });
    const gone = servers.pop()!;
    gone.closeAllConnections();
    await new Promise((r) => gone.close(r));
    const refused = await dispatchRequest(agent(), request(srv.origin)).catch((e: unknown) => e);
    const codes = [(refused as { code?: string }).code, ...((refused as { errors?: Array<{ code?: string }> }).errors ?? []).map((e) => e.code)];
    expect(codes).toContain('ECONNREFUSED');
  });
});

describe('Deadlines', () => {
  const timed = (at: number, log: number[]) => ({ at, expired: () => log.push(at), earlier: undefined, later: undefined });

  it('expires each entry at its deadline, earliest first, whatever the order added; a deleted one never; no timer left once none is in flight', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    try {
      const d = new Deadlines();
      const log: number[] = [];
      const t0 = performance.now();
      const [a, b, c, e] = [timed(t0 + 300, log), timed(t0 + 100, log), timed(t0 + 200, log), timed(t0 + 250, log)];
      for (const x of [a, b, c, e]) d.add(x);
      d.delete(e);
      vi.advanceTimersByTime(99);
      expect(log).toEqual([]);
      vi.advanceTimersByTime(1);
      expect(log).toEqual([t0 + 100]);
      vi.advanceTimersByTime(200);
      expect(log).toEqual([t0 + 100, t0 + 200, t0 + 300]);
      expect(vi.getTimerCount()).toBe(0);
      // Answered before the deadline: deleted, and the timer goes with the last one.
      const late = timed(performance.now() + 50, log);
      d.add(late);
      expect(vi.getTimerCount()).toBe(1);
      d.delete(late);
      d.delete(late);
      expect(vi.getTimerCount()).toBe(0);
      vi.advanceTimersByTime(1000);
      expect(log).toHaveLength(3);
    } finally {
      vi.useRealTimers();
    }
  });
});
