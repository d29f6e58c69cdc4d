import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError } from '../../src/errors.js';
import type { Dispatcher } from 'undici';
import { createDispatcher, createHttp, type Http, Pacer } from '../../src/http/index.js';
import { checkBaseUrl } from '../../src/http/url.js';
import { redactSecrets, scrubSecret, scrubValue } from '../../src/redact.js';
import { DeliveryClient } from '../../src/webhook/client.js';

const LONG = 'tok-0123456789abcdefXYZ';

describe('scrubSecret, scrubValue, redactSecrets', () => {
  it('replaces every occurrence of a secret of 8+ characters, even inside other text', () => {
    expect(scrubSecret(`bad token ${LONG}; again:${LONG}x`, LONG)).toBe('bad token ***; again:***x');
    expect(scrubSecret('nothing here', LONG)).toBe('nothing here');
  });

  it('replaces a short secret only where it stands alone', () => {
    expect(scrubSecret('bad token t, got "t" (t)', 't')).toBe('bad token ***, got "***" (***)');
    expect(scrubSecret('http://127.0.0.1:9/api/aptlet/b/card/x', 't')).toBe('http://127.0.0.1:9/api/aptlet/b/card/x');
    expect(scrubSecret('a.b a.b', 'a.b')).toBe('*** ***');
    expect(scrubSecret('axb', 'a.b')).toBe('axb');
    expect(scrubSecret('anything', '')).toBe('anything');
  });

  it('scrubs strings and keys of decoded data for long secrets only', () => {
    const data = { _id: `c-${LONG}`, [LONG]: [1, `x ${LONG}`, null], n: 12 };
    expect(scrubValue(data, LONG)).toEqual({ _id: 'c-***', '***': [1, 'x ***', null], n: 12 });
    expect(scrubValue({ Status: 't' }, 't')).toEqual({ Status: 't' });
  });

  it('the safety net ignores secrets under 8 characters, so a one-letter token mangles nothing', () => {
    const line = 'error: GET http://127.0.0.1:9/api/aptlet/b/card/x failed: connection refused (ECONNREFUSED)';
    expect(redactSecrets(new Set(['t', 'ab', '1234567']), line)).toBe(line);
    expect(redactSecrets(new Set(['t', LONG]), `token ${LONG} at t`)).toBe('token *** at t');
  });
});

describe('checkBaseUrl keeps pasted credentials and queries out of what is stored and shown', () => {
  it('drops user:password, query and fragment from the result', () => {
    expect(checkBaseUrl('https://user:pa55word@cards.example.com/base/?token=q-secret#f')).toBe('https://cards.example.com/base');
  });

  it('names a bad URL without its credentials or query', () => {
    for (const raw of ['ftp://user:pa55word@cards.example.com/?token=q-secret', 'https://user:pa55word@example.com:99999/?token=q-secret']) {
      const err = (() => {
        try {
          checkBaseUrl(raw);
        } catch (e) {
          return e as Error;
        }
        throw new Error('no error');
      })();
      expect(err.message).not.toMatch(/pa55word|q-secret|user/);
      expect(err.message).toContain('example.com');
    }
  });
});

const servers: Server[] = [];
const dispatchers: Dispatcher[] = [];

afterEach(async () => {
  await Promise.all(dispatchers.splice(0).map((d) => d.close()));
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

async function serve(handle: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const server = createServer(handle);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A server that echoes the x-token it received: in a JSON 400, a text 500, a redirect, and a 200 card. */
function echoToken(req: IncomingMessage, res: ServerResponse): void {
  const token = String(req.headers['x-token']);
  if (req.url!.endsWith('/json400')) {
    res.writeHead(400, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: `bad token ${token}` }));
  } else if (req.url === '/text500') {
    res.writeHead(500, { 'content-type': 'text/plain' });
    res.end(`internal error for x-token=${token}`);
  } else if (req.url === '/redirect') {
    res.writeHead(302, { location: `https://elsewhere.example/login?token=${token}` });
    res.end();
  } else {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ _id: 'c1', Note: `seen ${token}` }));
  }
}

async function client(token: string): Promise<Http> {
  const dispatcher = await createDispatcher();
  dispatchers.push(dispatcher);
  return createHttp({ baseUrl: await serve(echoToken), token, dispatcher, pacer: new Pacer(), retry: { maxTries: 1 } });
}

const failure = async (p: Promise<unknown>) => (await p.then(() => undefined, (e: unknown) => e)) as ApiError;

describe('the HTTP core scrubs its own token from what the server says', () => {
  it('a long token echoed in errors, a redirect and a 2xx body never reaches the caller', async () => {
    const http = await client(LONG);
    const json = await failure(http.get('/json400'));
    expect(json).toBeInstanceOf(ApiError);
    expect(json.serverMessage).toBe('bad token ***');
    expect(json.message).toBe(`400 Bad Request from GET ${http.baseUrl}/json400: bad token ***`);
    const text = await failure(http.get('/text500'));
    expect(text.serverMessage).toBe('internal error for x-token=***');
    const moved = await failure(http.get('/redirect'));
    expect(moved.message).toContain('to https://elsewhere.example/login?token=***;');
    expect(await http.get('/card')).toEqual({ _id: 'c1', Note: 'seen ***' });
    for (const e of [json, text, moved]) expect(JSON.stringify({ m: e.message, s: e.serverMessage, h: e.hint })).not.toContain(LONG);
  });

  it('a one-letter token hides where it stands alone and leaves the URL and the data intact', async () => {
    const http = await client('t');
    const err = await failure(http.get('/api/aptlet/b/card/json400'));
    expect(err.serverMessage).toBe('bad token ***');
    expect(err.message).toBe(`400 Bad Request from GET ${http.baseUrl}/api/aptlet/b/card/json400: bad token ***`);
    expect(await http.get('/card')).toEqual({ _id: 'c1', Note: 'seen t' });
  });
});

describe('the webhook client scrubs the signing key from a receiver answer', () => {
  it('an answer that echoes the key comes back with *** in its place', async () => {
    const url = await serve((req, res) => {
      res.writeHead(403, { 'content-type': 'text/plain' });
      res.end(`wrong x-signingKey ${String(req.headers['x-signingkey'])}`);
    });
    const c = new DeliveryClient();
    try {
      const key = 'sk-live-0123456789';
      const answer = await c.send({ url, method: 'POST', headers: { 'x-signingKey': `${key}x` }, body: Buffer.from('{}'), timeout: { ms: 5000, text: '5s' } });
      expect(answer.status).toBe(403);
      expect(answer.body.toString()).toBe('wrong x-signingKey ***');
      const plain = await c.send({ url, method: 'POST', headers: { 'x-signingKey': key }, body: Buffer.from('{}'), timeout: { ms: 5000, text: '5s' } });
      expect(plain.body.toString()).toBe('wrong x-signingKey ***');
    } finally {
      await c.close();
    }
  });
});
