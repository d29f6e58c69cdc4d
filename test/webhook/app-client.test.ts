// Requests to the user's app go through the dispatch every request uses: the answer's start kept (the rest
// read and dropped), one deadline for the whole answer, and the signing key scrubbed from the answer's
// bytes as the HTTP core scrubs the token from the service's. Against real local receivers.
import type { RequestListener } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { DeliveryClient } from '../../src/webhook/client.js';
import { startLocalServer } from '../helpers/receiver.js';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function serve(handler: RequestListener): Promise<string> {
  const local = await startLocalServer(handler);
  closers.push(local.close);
  return `${local.url}/hooks`;
}

function client(): DeliveryClient {
  const c = new DeliveryClient(1);
  closers.push(() => c.close());
  return c;
}

const KEY = 'sk-app-client-0123456789';
const send = (c: DeliveryClient, url: string, ms = 10_000) =>
  c.send({ url, method: 'POST', headers: { 'content-type': 'application/json', 'x-signingKey': KEY }, body: Buffer.from('{}'), timeout: { ms, text: `${ms / 1000}s` } });

describe("the user's app's answer", () => {
  it('keeps the first 64 KiB of a large answer and reads the rest, so the next request reuses the connection', async () => {
    const sockets = new Set<unknown>();
    const url = await serve((req, res) => {
      sockets.add(req.socket);
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'text/plain' }).end(Buffer.alloc(1024 * 1024, 0x61)));
    });
    const c = client();
    const first = await send(c, url);
    expect(first.status).toBe(200);
    expect(first.body.length).toBe(64 * 1024);
    expect((await send(c, url)).body.length).toBe(64 * 1024);
    expect(sockets.size).toBe(1);
  });

  it('ends at its deadline when the body trickles in (each byte in time for a timeout between chunks)', async () => {
    const url = await serve((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/plain' });
      const drip = setInterval(() => res.write('.'), 50);
      res.on('close', () => clearInterval(drip));
    });
    const answer = await send(client(), url, 400);
    expect(answer.status).toBeUndefined();
    expect(answer.error).toBe('timed out after 0.4s');
    expect(answer.body.length).toBe(0);
  });

  it('loses the signing key it echoes, and keeps every other byte of a binary answer as it came', async () => {
    const url = await serve((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(403, { 'content-type': 'application/octet-stream' }).end(Buffer.concat([Buffer.from([0xff, 0x00]), Buffer.from(String(req.headers['x-signingkey'])), Buffer.from([0x80])])));
    });
    const answer = await send(client(), url);
    expect(answer.status).toBe(403);
    expect(answer.body).toEqual(Buffer.concat([Buffer.from([0xff, 0x00]), Buffer.from('***'), Buffer.from([0x80])]));
  });

  it("carries the app's Retry-After, for the forwarder's wait", async () => {
    const url = await serve((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(503, { 'retry-after': '7' }).end());
    });
    expect(await send(client(), url)).toMatchObject({ status: 503, retryAfter: '7' });
  });
});
