import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

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
