import { once } from 'node:events';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A server of the test's own on a free loopback port (a receiver, a server that never answers): close() also ends the connections it holds open. */
export interface LocalServer {
  server: Server;
  url: string;
  close(): Promise<void>;
}

/** Start `handler` on a free loopback port. */
export async function startLocalServer(handler: RequestListener): Promise<LocalServer> {
  const server = createServer(handler);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    server,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A webhook receiver on a free port: the given signing key gets 200 "ok", anything else 403 "bad key" (spec 6). */
export async function startKeyReceiver(signingKey: string): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.statusCode = req.headers['x-signingkey'] === signingKey ? 200 : 403;
      res.end(res.statusCode === 200 ? 'ok' : 'bad key');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/**
 * A real record file: `webhook listen --port 0 --record <file>` (the built binary) receives `count`
 * signed deliveries (cards `card-1`…, Status alternating Done/Open), then stops on Ctrl-C. Resolves
 * with the file once the listener has ended by that SIGINT (a clean stop).
 */
export async function recordDeliveries(file: string, signingKey: string, count: number): Promise<string> {
  const { spawn } = await import('node:child_process');
  const { BIN, childEnv } = await import('./cli.js');
  const child = spawn(process.execPath, [BIN, 'webhook', 'listen', '--port', '0', '--record', file, '--quiet'], {
    env: childEnv({ env: { CARDBOARD_SIGNING_KEY: signingKey } }),
  });
  const exited = new Promise<number | NodeJS.Signals | null>((resolve) => child.on('close', (code, signal) => resolve(signal ?? code)));
  let err = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr.on('data', (b: Buffer) => {
      err += b.toString();
      const m = /Listening on (http:\/\/\S+)/.exec(err);
      if (m) resolve(m[1]!);
    });
    void exited.then(() => reject(new Error(`webhook listen exited before it listened: ${err}`)));
  });
  for (let i = 1; i <= count; i++) {
    const body = JSON.stringify({ _id: `card-${i}`, Name: `Card ${i}`, Status: i % 2 ? 'Done' : 'Open' });
    const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-signingKey': signingKey }, body });
    if (r.status !== 200) throw new Error(`delivery ${i} answered ${r.status}`);
  }
  child.kill('SIGINT');
  const end = await exited;
  if (end !== 'SIGINT') throw new Error(`webhook listen ended with ${end}, not by the SIGINT sent: ${err}`);
  return file;
}
