import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { runMain } from '../helpers/cli.js';
import { DeliveryClient } from '../../src/webhook/client.js';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

async function serve(handler: RequestListener): Promise<string> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}

const send = (c: DeliveryClient, url: string) => c.send({ url, method: 'POST', headers: { 'content-type': 'application/json' }, body: Buffer.from('{}'), timeout: { ms: 5000, text: '5s' } });

describe('the time of an answer: the receiver at work, not undici loading or connecting', () => {
  it('runs from the request being written to the end of the answer, in the injected clock', async () => {
    // Simulated time moves only where the test moves it: 500 while undici loads (setup, not the receiver's
    // fault), 7 while the receiver handles the request, 30 between its headers and the end of its body.
    let t = 0;
    const url = await serve((req, res) => {
      req.resume();
      req.on('end', () => {
        t += 7;
        res.writeHead(200);
        res.write('part');
        // The body's end waits for a tick after the headers: only then has the client seen them.
        setTimeout(() => {
          t += 30;
          res.end(' done');
        }, 20);
      });
    });
    const client = new DeliveryClient(1, {
      now: () => t,
      load: async () => {
        t += 500;
        return await import('undici');
      },
    });
    closers.push(() => client.close());
    const first = await send(client, url);
    expect(first.status).toBe(200);
    expect(first.body.toString()).toBe('part done');
    expect(first.ms).toBe(37);
    // On the kept-alive connection, the same.
    expect((await send(client, url)).ms).toBe(37);
  });

  it('a failure before anything was written is timed from the call', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    let t = 0;
    const client = new DeliveryClient(1, {
      now: () => t,
      load: async () => {
        t += 500;
        return await import('undici');
      },
    });
    closers.push(() => client.close());
    const answer = await client.send({ url: `http://127.0.0.1:${port}/`, method: 'POST', headers: {}, body: Buffer.from('{}'), timeout: { ms: 5000, text: '5s' } });
    expect(answer.status).toBeUndefined();
    expect(answer).toMatchObject({ error: 'ECONNREFUSED', ms: 500 });
  });

  it('a timeout is reported in the words the user gave it', async () => {
    const url = await serve(() => {});
    const client = new DeliveryClient(1);
    closers.push(() => client.close());
    const answer = await client.send({ url, method: 'POST', headers: {}, body: Buffer.from('{}'), timeout: { ms: 50, text: '0.05s' } });
    expect(answer.error).toBe('timed out after 0.05s');
  });

  it('webhook send reports at least the time the receiver took between its headers and its last byte', async () => {
    const url = await serve((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('O');
        setTimeout(() => res.end('K'), 300);
      });
    });
    const r = await runMain(['webhook', 'send', '--to', url], { env: { CARDBOARD_SIGNING_KEY: 'sk-timing' } });
    expect(r.code, r.stderr).toBe(0);
    const ms = Number(/^200 OK in ([\d.]+) ms$/m.exec(r.stdout)?.[1]);
    expect(ms).toBeGreaterThanOrEqual(300);
  });
});
