// What the tests of the inspector's server share: an in-process Inspector on a free port, raw requests with
// exactly the headers given, and a receiver that records what a replay sends.
import { createServer, type IncomingHttpHeaders, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'vitest';
import { MASK } from '../../src/redact.js';
import type { Delivery } from '../../src/webhook/delivery.js';
import { Inspector, type InspectorOptions } from '../../src/webhook/inspector/server.js';
import { emptyRecord } from '../../src/own-keys.js';
import type { Cleanup } from './helpers.js';

export const KEY = 'sk-inspector-api-0123456789';

export const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

export interface Raw {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

export type { Cleanup } from './helpers.js';

export async function startInspector(cleanup: Cleanup, opts: Partial<InspectorOptions> = {}): Promise<Inspector> {
  const i = new Inspector({ ports: [0], key: KEY, verified: true, recording: false, ...opts });
  cleanup.push(() => i.stop());
  await i.start();
  return i;
}

export function delivery(seq: number, body: string | Buffer, extra: Record<string, string> = {}): Delivery {
  const headers = Object.assign(emptyRecord<string>(), { 'Content-Type': 'application/json', 'x-signingKey': MASK, 'User-Agent': 'svc' }, extra);
  return { seq, receivedAt: new Date(Date.UTC(2026, 10, 26, 6, 0, 0, seq)).toISOString(), method: 'POST', path: '/', headers, body: Buffer.isBuffer(body) ? body : Buffer.from(body) };
}

/** One request with exactly these headers (Host included, when given) on 127.0.0.1:port. */
export function raw(port: number, method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method, path, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** An action as the page sends it: the token header and a JSON body. */
export function act(i: Inspector, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Raw> {
  return raw(i.port, method, `/${i.token}/${path}`, { 'content-type': 'application/json', 'x-cardboard-token': i.token, ...headers }, body === undefined ? undefined : JSON.stringify(body));
}

export function expectSecurityHeaders(r: Raw): void {
  expect(r.headers['content-security-policy']).toBe(CSP);
  expect(r.headers['x-content-type-options']).toBe('nosniff');
  expect(r.headers['referrer-policy']).toBe('no-referrer');
  expect(r.headers['cache-control']).toBe('no-store');
}

export interface Got {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  rawHeaders: string[];
  body: Buffer;
}

/** A receiver on port 0 that records each request and answers 202 with `answer` (default `thanks N`) and a header. */
export async function receiver(cleanup: Cleanup, answer?: (n: number) => string): Promise<{ url: string; got: Got[] }> {
  const got: Got[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      got.push({ method: req.method!, url: req.url!, headers: req.headers, rawHeaders: req.rawHeaders, body: Buffer.concat(chunks) });
      res.writeHead(202, { 'content-type': 'text/plain', 'x-app': 'local' }).end(answer ? answer(got.length) : `thanks ${got.length}`);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanup.push(
    () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, got };
}
