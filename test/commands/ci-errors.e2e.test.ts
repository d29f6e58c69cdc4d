// Errors a CI job can act on, over real HTTP: a timeout names the tries it took and the wait of each
// (--timeout bounds one try), and a large card or comment refused with 400 or 413 names the size sent.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runMain, tempDir } from '../helpers/cli.js';
import { BOARD_ID, type RunningEmulator, startTestEmulator, TOKEN } from '../helpers/emulator.js';
import { type LocalServer, startLocalServer } from '../helpers/receiver.js';
import { cli } from './helpers.js';

let emu: RunningEmulator | undefined;
let server: LocalServer | undefined;
afterEach(async () => {
  await emu?.close();
  emu = undefined;
  await server?.close();
  server = undefined;
});

/** Above the emulator's 1 MB body limit (it answers 400 "Bad request" past it): 1.4 MB as sent. */
const BIG = 'x'.repeat(1_500_000);

describe('a server that never answers', () => {
  it('card get --timeout 1s (the built binary): the error names the 4 tries and the 1s of each', async () => {
    emu = await startTestEmulator({ faults: 'delay:60s' });
    const r = await cli(emu, ['card', 'get', 'some-card', '--timeout', '1s'], { spawn: true });
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain(`error: GET ${emu.url}/api/aptlet/${BOARD_ID}/card/some-card failed: no complete answer in 4 tries of 1s each (ERR_ANSWER_TIMEOUT)\n`);
    expect(r.stderr).toContain('hint: Each try waited up to 1s: --timeout bounds one try, not the whole command.');
    expect(r.stderr).not.toContain('Waited 1s');
    expect(emu.requests().filter((q) => q.method === 'GET')).toHaveLength(4);
  });
});

describe('a large body refused', () => {
  it('card put --data @file of 1.4 MB against the emulator (400): the error names the size of the card', async () => {
    emu = await startTestEmulator();
    const file = join(tempDir(), 'big.json');
    writeFileSync(file, JSON.stringify({ Name: BIG }));
    const r = await cli(emu, ['card', 'put', '--data', `@${file}`]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      `error: 400 Bad Request from POST ${emu.url}/api/aptlet/${BOARD_ID}: Bad request (the card sent was 1.4 MB)\n` +
        'hint: The server refused a 1.4 MB card; it may limit the size of a card: try a smaller one.\n',
    );
  });

  it('comment --file of 1.4 MB against the emulator (400): the error names the size of the comment', async () => {
    emu = await startTestEmulator();
    const id = (await cli(emu, ['card', 'put', 'Name=small'])).stdout.trim();
    const file = join(tempDir(), 'big.txt');
    writeFileSync(file, BIG);
    const r = await cli(emu, ['comment', id, '--file', file]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(': Bad request (the comment sent was 1.4 MB)\n');
    expect(r.stderr).toContain('hint: The server refused a 1.4 MB comment; it may limit the size of a comment');
  });

  it('a local node:http server: 413 names the size whatever it is; 400 to a small card does not', async () => {
    let status = 413;
    server = await startLocalServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(req.method === 'GET' ? 200 : status, { 'content-type': 'application/json' });
        res.end(req.method === 'GET' ? JSON.stringify([{ name: 'Name' }]) : '{"error":"request entity too large"}');
      });
    });
    const url = server.url;
    const put = () => runMain(['card', 'put', `Name=${'y'.repeat(20_000)}`], { env: { CARDBOARD_BASE_URL: url, CARDBOARD_BOARD: BOARD_ID, CARDBOARD_TOKEN: TOKEN } });
    const r = await put();
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`error: 413 Payload Too Large from POST ${url}/api/aptlet/${BOARD_ID}: request entity too large (the card sent was 19.5 kB)\n`);
    expect(r.stderr).toContain('hint: The server refused a 19.5 kB card as too large; it may limit the size of a card');
    status = 400;
    const small = await put();
    expect(small.stderr).toContain(`error: 400 Bad Request from POST ${url}/api/aptlet/${BOARD_ID}: request entity too large\n`);
    expect(small.stderr).not.toContain('sent was');
  });
});
