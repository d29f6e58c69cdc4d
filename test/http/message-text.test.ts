// The server's message in an HTTP error goes through the one text module: one line, the one escape policy
// (ESC as `\e`, C1, bidi and zero-width characters by code), cut to 200 columns between grapheme clusters.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { Dispatcher } from 'undici';
import { ApiError } from '../../src/errors.js';
import { createDispatcher, createHttp } from '../../src/http/index.js';
import { Pacer } from '../../src/http/index.js';
import { displayWidth } from '../../src/io/width.js';

const LONE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]|\\ud8[0-9a-f]{2}/;
const servers: Server[] = [];
const dispatchers: Dispatcher[] = [];

afterEach(async () => {
  await Promise.all(dispatchers.splice(0).map((d) => d.close()));
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

/** The ApiError of a GET answered 400 with `body`. */
async function errorFor(body: string, contentType = 'text/plain; charset=utf-8'): Promise<ApiError> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(400, { 'content-type': contentType }).end(body));
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const dispatcher = await createDispatcher();
  dispatchers.push(dispatcher);
  const http = createHttp({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, token: 'tok-secret', dispatcher, pacer: new Pacer(), retry: { baseDelayMs: 1, maxDelayMs: 2 } });
  const err = await http.get('/api/aptlet/b').then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  return err as ApiError;
}

describe('the HTTP error line', () => {
  it('cuts a long emoji body between clusters, never leaving half of a pair', async () => {
    const err = await errorFor(`${'a'.repeat(198)}😀😀`);
    expect(err.serverMessage).toBe(`${'a'.repeat(198)}…`);
    expect(err.message).toMatch(new RegExp(`: ${'a'.repeat(198)}…$`));
    expect(err.message).not.toMatch(LONE);
  });
  it('cuts by display width: 200 columns of CJK are 99 ideographs and the ellipsis', async () => {
    const err = await errorFor(JSON.stringify({ error: '漢'.repeat(150) }), 'application/json');
    expect(err.serverMessage).toBe(`${'漢'.repeat(99)}…`);
    expect(displayWidth(err.serverMessage!)).toBe(199);
  });
  it('escapes what a terminal acts on as every other line does, rather than dropping some and keeping others', async () => {
    const err = await errorFor(JSON.stringify({ reason: 'bad\u001b[2J\u202eevil\u200bx\u0085y' }), 'application/json');
    expect(err.serverMessage).toBe('bad\\e[2J\\u202eevil\\u200bx\\x85y');
  });
  it('an HTML entity past Unicode is shown as written, not a RangeError', async () => {
    const err = await errorFor('<html><title>x&#x110000;y &#99999999999; z&#x1F600;</title></html>', 'text/html');
    expect(err.serverMessage).toBe('x&#x110000;y &#99999999999; z😀');
  });
});
