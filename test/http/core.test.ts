import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError } from '../../src/errors.js';
import type { Dispatcher } from 'undici';
import { createDispatcher, createHttp, type Http, Pacer } from '../../src/http/index.js';
import { LARGE_BODY_BYTES } from '../../src/http/error-words.js';

interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

const servers: Server[] = [];
const dispatchers: Dispatcher[] = [];

/** A real server on port 0 that records each request and answers with `handle`. */
async function serve(handle: (req: Seen, res: ServerResponse) => void): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => {
      body += c.toString();
    });
    req.on('end', () => {
      const s = { method: req.method!, url: req.url!, headers: req.headers, body };
      seen.push(s);
      handle(s, res);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

async function client(baseUrl: string, extra: Partial<Parameters<typeof createHttp>[0]> = {}): Promise<Http> {
  const dispatcher = await createDispatcher();
  dispatchers.push(dispatcher);
  return createHttp({ baseUrl, token: 'tok-secret', dispatcher, pacer: new Pacer(), retry: { baseDelayMs: 1, maxDelayMs: 2 }, ...extra });
}

afterEach(async () => {
  await Promise.all(dispatchers.splice(0).map((d) => d.close()));
  for (const s of servers.splice(0)) s.closeAllConnections();
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
});

const json = (res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(value));
};

describe('HTTP core against a real server', () => {
  it('sends x-token as a header (never in the query), a User-Agent, and JSON bodies', async () => {
    const srv = await serve((_req, res) => json(res, 201, { ok: true }));
    const http = await client(`${srv.url}/base/`);
    expect(await http.post('/api/aptlet/b%2F1', { Name: 'x' })).toEqual({ ok: true });
    expect(await http.get('/api/aptlet/b', { page: 2 })).toEqual({ ok: true });
    const [post, get] = srv.seen;
    expect(post!.url).toBe('/base/api/aptlet/b%2F1');
    expect(post!.headers['x-token']).toBe('tok-secret');
    expect(post!.headers['content-type']).toBe('application/json');
    expect(post!.headers['user-agent']).toMatch(/^cardboard\/\d+\.\d+\.\d+ node\/\d+\.\d+\.\d+$/);
    expect(post!.headers['user-agent']).toContain(` node/${process.versions.node}`);
    expect(JSON.parse(post!.body)).toEqual({ Name: 'x' });
    expect(get!.url).toBe('/base/api/aptlet/b?page=2');
    expect(get!.url).not.toContain('tok-secret');
    expect(get!.headers['content-type']).toBeUndefined();
  });

  it('turns an HTML error page into a short clean message with the status', async () => {
    const srv = await serve((_req, res) => {
      res.writeHead(404, { 'content-type': 'text/html' });
      res.end('<html><body><h1>Not   Found</h1><p>The board is <b>gone</b>.</p></body></html>');
    });
    const http = await client(srv.url);
    const err = (await http.get('/api/aptlet/x/card/y').catch((e) => e)) as ApiError;
    expect(err).toBeInstanceOf(ApiError);
    expect(err.status).toBe(404);
    expect(err.serverMessage).toBe('Not Found The board is gone.');
    expect(err.message).toBe(`404 Not Found from GET ${srv.url}/api/aptlet/x/card/y: Not Found The board is gone.`);
    expect(err.hint).toContain('card id');
    expect(srv.seen).toHaveLength(1);
  });

  it('maps 401 to exit 4 with a `cardboard board add` hint and no retry', async () => {
    const srv = await serve((_req, res) => json(res, 401, { error: 'invalid token' }));
    const http = await client(srv.url);
    const err = (await http.get('/s').catch((e) => e)) as ApiError;
    expect([err.status, err.exitCode, err.serverMessage]).toEqual([401, 4, 'invalid token']);
    expect(err.hint).toContain('cardboard board add');
    expect(srv.seen).toHaveLength(1);
  });

  it('does not follow a redirect, so the token never reaches the other origin', async () => {
    const other = await serve((_req, res) => json(res, 200, []));
    const srv = await serve((_req, res) => {
      res.writeHead(302, { location: `${other.url}/steal` });
      res.end();
    });
    const http = await client(srv.url);
    const err = (await http.get('/api/aptlet/b').catch((e) => e)) as ApiError;
    expect(err.status).toBe(302);
    expect(err.message).toContain(`to ${other.url}/steal`);
    expect(err.exitCode).toBe(1);
    expect(other.seen).toHaveLength(0);
    expect(srv.seen).toHaveLength(1);
  });

  it('a redirect whose Location is not a URL (`http://[::1`) is a clear error, not a crash', async () => {
    const srv = await serve((_req, res) => {
      res.writeHead(301, { location: 'http://[::1' });
      res.end();
    });
    const http = await client(srv.url);
    const err = (await http.get('/api/aptlet/b').catch((e) => e)) as ApiError;
    expect(err).toBeInstanceOf(ApiError);
    expect([err.status, err.exitCode]).toEqual([301, 1]);
    expect(err.message).toContain('to "http://[::1" (not a valid URL); cardboard does not follow redirects');
    expect(srv.seen).toHaveLength(1);
  });

  it('retries a GET after 503 with Retry-After, and never a plain POST the server may have applied (500)', async () => {
    let n = 0;
    const srv = await serve((req, res) => {
      if (req.method === 'GET' && n++ === 0) return json(res, 503, { reason: 'busy' }, { 'retry-after': '0' });
      if (req.method === 'POST') return json(res, 500, { reason: 'busy' });
      json(res, 200, [{ _id: 'a' }]);
    });
    const http = await client(srv.url);
    expect(await http.get('/api/aptlet/b')).toEqual([{ _id: 'a' }]);
    const err = (await http.post('/api/aptlet/b', {}).catch((e) => e)) as ApiError;
    expect([err.status, err.serverMessage]).toEqual([500, 'busy']);
    expect(srv.seen.map((s) => s.method)).toEqual(['GET', 'GET', 'POST']);
  });

  it('HEAD is a read: tried again after a 500 like a GET; DELETE is not', async () => {
    let n = 0;
    const srv = await serve((req, res) => (n++ % 2 === 0 ? json(res, 500, { reason: 'flaky' }) : json(res, 200, {})));
    const http = await client(srv.url);
    expect((await http.send({ method: 'HEAD', path: '/api/x' })).status).toBe(200);
    const err = (await http.send({ method: 'DELETE', path: '/api/x' }).catch((e) => e)) as ApiError;
    expect(err.status).toBe(500);
    expect(srv.seen.map((s) => s.method)).toEqual(['HEAD', 'HEAD', 'DELETE']);
  });

  it('a raw request: body bytes sent as they are; the answer as it came (bytes, headers), the token scrubbed; an error keeps its answer', async () => {
    const srv = await serve((req, res) => {
      if (req.url === '/api/missing') return json(res, 404, { error: 'no tok-secret here' }, { 'x-echo': 'tok-secret' });
      res.writeHead(200, { 'content-type': 'application/json', 'x-echo': 'got tok-secret' });
      res.end(`{"n":12345678901234567890,"echo":${JSON.stringify(req.body)}}`);
    });
    const http = await client(srv.url);
    const res = await http.send({ method: 'PUT', path: '/api/x', query: new URLSearchParams([['a', '1'], ['a', '2']]), bodyBytes: Buffer.from('{"k": 1.50}'), raw: true });
    expect(srv.seen[0]!.url).toBe('/api/x?a=1&a=2');
    expect(srv.seen[0]!.body).toBe('{"k": 1.50}');
    expect(srv.seen[0]!.headers['content-type']).toBe('application/json');
    expect(res.body).toEqual(Buffer.from('{"n":12345678901234567890,"echo":"{\\"k\\": 1.50}"}'));
    expect(res.headers['x-echo']).toBe('got ***');
    const err = (await http.send({ method: 'GET', path: '/api/missing', raw: true }).catch((e) => e)) as ApiError;
    expect([err.status, err.exitCode]).toEqual([404, 1]);
    expect(err.response?.body.toString()).toBe('{"error":"no *** here"}');
    expect(err.response?.headers['x-echo']).toBe('***');
  });

  it('gives up on 429 after its try cap, naming the service limit (no --rate: it cannot pace other processes)', async () => {
    const srv = await serve((_req, res) => json(res, 429, { message: 'too many' }, { 'retry-after': '0' }));
    const http = await client(srv.url, { retry: { maxThrottledTries: 3, baseDelayMs: 1 } });
    const err = (await http.get('/x').catch((e) => e)) as ApiError;
    expect(err.status).toBe(429);
    expect(err.message).toContain('still rate-limited after 3 tries: stopped.');
    expect(err.hint).toContain('120 requests a minute per API key');
    expect(err.hint).not.toContain('--rate');
    expect(srv.seen).toHaveLength(3);
  });

  it('fails a silent server at the answer deadline with a --timeout hint', async () => {
    const srv = await serve(() => {});
    const http = await client(srv.url, { timeoutMs: 300, retry: { maxTries: 1 } });
    const err = (await http.get('/x').catch((e) => e)) as ApiError;
    expect(err.status).toBeUndefined();
    expect(err.code).toBe('ERR_ANSWER_TIMEOUT');
    expect(err.message).toBe(`GET ${srv.url}/x failed: no complete answer within 300ms (ERR_ANSWER_TIMEOUT)`);
    expect(err.hint).toContain('--timeout');
    expect(err.cause).toBeInstanceOf(Error);
  });

  it('a request that timed out on every try names the tries and the wait of each, not the wait of one', async () => {
    const srv = await serve(() => {});
    const http = await client(srv.url, { timeoutMs: 300, retry: { maxTries: 3, baseDelayMs: 1, maxDelayMs: 2 } });
    const err = (await http.get('/x').catch((e) => e)) as ApiError;
    expect(srv.seen).toHaveLength(3);
    expect(err.code).toBe('ERR_ANSWER_TIMEOUT');
    expect(err.message).toBe(`GET ${srv.url}/x failed: no complete answer in 3 tries of 300ms each (ERR_ANSWER_TIMEOUT)`);
    expect(err.hint).toBe('Each try waited up to 300ms: --timeout bounds one try, not the whole command. Check the base URL, or allow longer with --timeout, e.g. --timeout 2m.');
    expect(err.cause).toBeInstanceOf(Error);
  });

  it('counts only the tries that timed out: a 500 first, then two silent tries', async () => {
    const srv = await serve((req, res) => {
      if (srv.seen.length === 1) json(res, 500, { error: 'busy' });
    });
    const http = await client(srv.url, { timeoutMs: 300, retry: { maxTries: 3, baseDelayMs: 1, maxDelayMs: 2 } });
    const err = (await http.get('/x').catch((e) => e)) as ApiError;
    expect(err.message).toBe(`GET ${srv.url}/x failed: no complete answer in 2 of 3 tries of 300ms each (ERR_ANSWER_TIMEOUT)`);
  });

  it('a 400 or 413 keeps the size of the body sent (the API layer names it); other answers and bodiless requests do not', async () => {
    const big = 'x'.repeat(LARGE_BODY_BYTES);
    const srv = await serve((req, res) => json(res, Number(req.url.slice(1)), { error: 'no' }));
    const http = await client(srv.url);
    const sent = async (status: number, body: unknown) => ((await http.post(`/${status}`, body).catch((e) => e)) as ApiError).sentBytes;
    expect(await sent(400, { Name: big })).toBe(LARGE_BODY_BYTES + 11);
    expect(await sent(413, { Name: 'a' })).toBe(12);
    expect(await sent(422, { Name: big })).toBeUndefined();
    expect(((await http.get('/413').catch((e) => e)) as ApiError).sentBytes).toBeUndefined();
  });

  it('reports a refused connection with its code and a base URL hint', async () => {
    const srv = await serve(() => {});
    const url = srv.url;
    await new Promise((r) => servers.pop()!.close(r));
    const http = await client(url, { retry: { maxTries: 1 } });
    const err = (await http.get('/x').catch((e) => e)) as ApiError;
    expect([err.status, err.code]).toEqual([undefined, 'ECONNREFUSED']);
    expect(err.message).toBe(`GET ${url}/x failed: connection refused (ECONNREFUSED)`);
    expect(err.hint).toContain('base URL');
  });

  it('logs each try with status and time, through the given log', async () => {
    let n = 0;
    const srv = await serve((_req, res) => (n++ === 0 ? json(res, 500, {}) : json(res, 200, [])));
    const lines: string[] = [];
    const http = await client(srv.url, { log: (l) => lines.push(l) });
    await http.get('/api/aptlet/b', { page: 0 });
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(new RegExp(`^GET ${srv.url}/api/aptlet/b\\?page=0 → 500 \\(\\d+ ms\\)$`));
    expect(lines[1]).toMatch(/^retry #1 of GET .* after 500$/);
    expect(lines[2]).toMatch(/→ 200 \(\d+ ms\)$/);
  });

  it('refuses plain http:// to a non-loopback host before sending anything', async () => {
    await expect(client('http://cards.example.com')).rejects.toMatchObject({ exitCode: 2 });
  });
});
