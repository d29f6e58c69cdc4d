// A 2xx answer to POST without a usable `_id` (a 204, `{"id": …}`, text) most likely stored the card:
// its row is `uncertain` and the run goes on, instead of a stop that hides the rows in flight.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runMain, tempDir } from '../helpers/cli.js';
import { readResults, writeCards } from './helpers.js';

let server: Server;
let url = '';
let stored = 0;
const answers: ((res: import('node:http').ServerResponse) => void)[] = [
  (res) => res.writeHead(204).end(),
  (res) => res.writeHead(201, { 'content-type': 'application/json' }).end('{"id":"x1"}'),
  (res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok'),
];

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/api/aptlet/nb/schema') {
      res.writeHead(200, { 'content-type': 'application/json' }).end('[{"name":"Name"},{"name":"Status"},{"name":"Owner"},{"name":"Priority"}]');
      return;
    }
    req.resume();
    // Every other request (the POSTs, and the reads of the board that look for an uncertain row's card)
    // gets the same kind of answers: success without a card.
    if (req.method !== 'POST') {
      res.writeHead(204).end();
      return;
    }
    req.on('end', () => answers[stored++ % answers.length]!(res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('cardboard import against a server that answers success without an _id', () => {
  it('marks each such row uncertain, goes on to the last row, and exits 3', async () => {
    const file = writeCards(9, 'n');
    const results = join(tempDir(), 'results.csv');
    const r = await runMain(['import', file, '--results', results, '--json'], {
      configDir: tempDir(),
      env: { CARDBOARD_BASE_URL: url, CARDBOARD_BOARD: 'nb', CARDBOARD_TOKEN: 'tok-no-id-1234' },
    });
    expect(r.code).toBe(3);
    expect(JSON.parse(r.stdout)).toMatchObject({ rows: 9, created: 0, uncertain: 9, rejected: 0 });
    expect(stored).toBe(9); // each row posted once: none repeated blindly
    const res = readResults(results);
    expect(res.map((x) => x.state)).toEqual(Array(9).fill('uncertain'));
    expect(res[0]!.message).toContain('no card `_id`: the card may have been stored');
  });
});
