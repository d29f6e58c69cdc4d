// `cardboard api [METHOD] PATH`: one raw request through the client every command uses, against the emulator
// over real HTTP (in-process runMain, or the spawned binary where signals and stdin matter).
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import { BIN, childEnv, runCli, runMain, tempDir } from '../helpers/cli.js';
import { BOARD_ID, type RunningEmulator, TOKEN } from '../helpers/emulator.js';
import { hostileEnv, useHostileServer } from '../helpers/hostile-server.js';
import { runOnPty } from '../helpers/pty.js';
import { skippingClock } from '../helpers/sim.js';
import { start, until } from '../import/helpers.js';
import { cli } from './helpers.js';

const hostile = useHostileServer(afterEach);
const cards = (emu: RunningEmulator) => emu.state()[BOARD_ID]!.cards;
const env = (emu: RunningEmulator) => ({ CARDBOARD_BASE_URL: emu.url, CARDBOARD_BOARD: BOARD_ID, CARDBOARD_TOKEN: TOKEN });

/** POST n cards straight to the emulator (not through cardboard), then forget those requests. */
async function seed(emu: RunningEmulator, n: number, prefix = 'seed'): Promise<void> {
  for (let i = 0; i < n; i++) {
    const res = await fetch(`${emu.url}/api/aptlet/${BOARD_ID}`, { method: 'POST', headers: { 'x-token': TOKEN, 'content-type': 'application/json' }, body: JSON.stringify({ Name: `${prefix}-${i}` }) });
    expect(res.status).toBe(200);
  }
  emu.resetRequests();
}

/** Spawn the built CLI against the emulator; `seen(check)` waits for the server to see something, failing at once if the process ends first. */
function spawnApi(emu: RunningEmulator, args: string[]) {
  const child = spawn(process.execPath, [BIN, ...args], { env: childEnv({ env: env(emu) }), stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => (out += s));
  child.stderr.setEncoding('utf8').on('data', (s: string) => (err += s));
  let ended = false;
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('close', (code, signal) => {
      ended = true;
      resolve({ code, signal });
    }),
  );
  const seen = async (check: () => boolean, what: string) => {
    await until(() => check() || ended);
    if (!check()) throw new Error(`the command ended before ${what}: ${err}`);
  };
  return { child, exit, seen, stdout: () => out, stderr: () => err };
}

describe('cardboard api GET --paginate', () => {
  it('prints every card of every page once, as one JSON array in board order; pages 0..5 then the empty page 6', async () => {
    const emu = await start({ pageSize: 5 });
    await seed(emu, 27);
    const r = await cli(emu, ['api', 'GET', '/api/aptlet/{board}', '--paginate']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(cards(emu));
    // Compact when piped: the array's brackets on lines of their own, one card a line.
    expect(r.stdout.split('\n')).toHaveLength(27 + 3);
    expect(emu.requests().map((q) => q.path)).toEqual([0, 1, 2, 3, 4, 5, 6].map((p) => `/api/aptlet/${BOARD_ID}?page=${p}`));
    expect(r.stderr).toBe('');
  });

  it('cards created between pages: each card printed once, every card there at the start among them', async () => {
    const emu = await start({ pageSize: 4 });
    await seed(emu, 20);
    const before = cards(emu).map((c) => c._id);
    // Paced at 4 requests a second, so the walk is still reading when the new cards land.
    const run = spawnApi(emu, ['--rate', '4/s', 'api', 'GET', '/api/aptlet/{board}', '--paginate']);
    await run.seen(() => emu.requests().length >= 2, 'reading page 1');
    await seed(emu, 6, 'during');
    expect((await run.exit).code, run.stderr()).toBe(0);
    const ids = (JSON.parse(run.stdout()) as { _id: string }[]).map((c) => c._id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.slice(0, before.length)).toEqual(before);
    expect(ids.length).toBeGreaterThanOrEqual(before.length);
  });

  it('pages that shift under the reader (a card ahead of it before each page): each card once, and a note at the end', async () => {
    const all = Array.from({ length: 40 }, (_, i) => ({ _id: `card${String(i).padStart(4, '0')}`, Title: `t${i}` }));
    const s = await hostile('shifting-pages', { cards: all, pageSize: 8 });
    const r = await runCli(['api', 'GET', '/api/aptlet/{board}', '--paginate'], { env: hostileEnv(s) });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(all);
    expect(r.stderr).toBe('note: pages shifted while they were read: 5 cards seen twice were printed once; run again for a consistent listing\n');
  });

  it('a path that is not a card list is refused at its first page, not walked for ever', async () => {
    const emu = await start();
    const r = await cli(emu, ['api', '/api/aptlet/{board}/schema', '--paginate']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('not a card with a string `_id`');
    expect(emu.requests()).toHaveLength(1);
  });

  it('on a terminal: one indented JSON array', async () => {
    const emu = await start({ pageSize: 2 });
    await seed(emu, 3);
    const r = await runOnPty(['api', '/api/aptlet/{board}', '--paginate'], env(emu));
    expect(r.code, r.screen).toBe(0);
    const [a, b, c] = cards(emu);
    expect(r.screen.replace(/\r\n/g, '\n')).toBe(`${JSON.stringify([a, b, c], null, 2)}\n`);
  });
});

describe('cardboard api, one request', () => {
  it('GET one card: the body exactly as the service sent it (piped), nothing on stderr', async () => {
    const emu = await start();
    await seed(emu, 2);
    const card = cards(emu)[1]!;
    const r = await cli(emu, ['api', `/api/aptlet/{board}/card/${card._id}`]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(JSON.stringify(card));
    expect(r.stderr).toBe('');
    expect(emu.requests().map((q) => [q.method, q.path])).toEqual([['GET', `/api/aptlet/${BOARD_ID}/card/${card._id}`]]);
  });

  it('on a terminal: JSON indented, and a server\'s escape sequence shown as \\u001b, never sent raw', async () => {
    const emu = await start();
    const r0 = await cli(emu, ['api', 'POST', '/api/aptlet/{board}', '-f', 'Name=\u001b]0;pwned\u0007x', '-F', 'Priority=12345678901234567']);
    expect(r0.code, r0.stderr).toBe(2);
    expect(r0.stderr).toContain('the number cannot be sent exactly as JSON');
    await cli(emu, ['api', 'POST', '/api/aptlet/{board}', '-f', 'Name=\u001b]0;pwned\u0007x']);
    const card = cards(emu)[0]!;
    const r = await runOnPty(['api', `/api/aptlet/{board}/card/${card._id}`], env(emu));
    expect(r.code, r.screen).toBe(0);
    expect(r.screen).not.toContain('\u001b]0;');
    expect(r.screen.replace(/\r\n/g, '\n')).toBe(`{\n  "_id": "${card._id}",\n  "Name": "\\u001b]0;pwned\\u0007x"\n}\n`);
  });

  it('POST with -f and -F builds a JSON object body and creates the card; stdout is the answer', async () => {
    const emu = await start();
    const r = await cli(emu, ['api', 'POST', '/api/aptlet/{board}', '-f', 'Name=Fix login', '-F', 'Priority=3', '-F', 'Owner=null', '-f', 'Status=true']);
    expect(r.code, r.stderr).toBe(0);
    const [card] = cards(emu);
    expect(card).toEqual({ _id: card!._id, Name: 'Fix login', Priority: 3, Owner: null, Status: 'true' });
    expect(JSON.parse(r.stdout)).toEqual(card);
    const [post] = emu.requests();
    expect(post!.headers['content-type']).toBe('application/json');
    expect(post!.body).toEqual({ Name: 'Fix login', Priority: 3, Owner: null, Status: 'true' });
  });

  it('fields without a method: POST (as gh); with GET they are query parameters', async () => {
    const emu = await start({ pageSize: 2 });
    await seed(emu, 5);
    const made = await cli(emu, ['api', '/api/aptlet/{board}', '-f', 'Name=posted']);
    expect(made.code, made.stderr).toBe(0);
    expect(cards(emu).at(-1)!.Name).toBe('posted');
    const r = await cli(emu, ['api', 'GET', '/api/aptlet/{board}', '-F', 'page=1']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(cards(emu).slice(2, 4));
    expect(emu.requests().at(-1)!.path).toBe(`/api/aptlet/${BOARD_ID}?page=1`);
  });

  it('-F key=@file reads the value from a file', async () => {
    const emu = await start();
    const file = join(tempDir(), 'name.txt');
    writeFileSync(file, 'line one\nline two');
    const r = await cli(emu, ['api', 'POST', '/api/aptlet/{board}', '-F', `Name=@${file}`]);
    expect(r.code, r.stderr).toBe(0);
    expect(cards(emu)[0]!.Name).toBe('line one\nline two');
  });

  it('--input FILE sends the file\'s bytes as the body, as JSON', async () => {
    const emu = await start();
    const file = join(tempDir(), 'card.json');
    writeFileSync(file, '{"Name":"from a file","Priority":7}');
    const r = await cli(emu, ['api', 'POST', '/api/aptlet/{board}', '--input', file]);
    expect(r.code, r.stderr).toBe(0);
    expect(cards(emu)[0]).toEqual({ _id: expect.any(String), Name: 'from a file', Priority: 7 });
    expect(emu.requests()[0]!.headers['content-type']).toBe('application/json');
  });

  it('--input - reads the body from stdin (spawned, stdin a pipe)', async () => {
    const emu = await start();
    const r = await runCli(['api', 'POST', '/api/aptlet/{board}', '--input', '-'], { env: env(emu), input: '{"Name":"from stdin"}' });
    expect(r.code, r.stderr).toBe(0);
    expect(cards(emu)[0]).toEqual({ _id: expect.any(String), Name: 'from stdin' });
    expect(JSON.parse(r.stdout)).toEqual(cards(emu)[0]);
  });

  it('--include: the status line and headers on stderr, the body alone on stdout', async () => {
    const emu = await start();
    const r = await cli(emu, ['api', '/api/aptlet/{board}/schema', '--include']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(emu.state()[BOARD_ID]!.fields);
    const lines = r.stderr.split('\n');
    expect(lines[0]).toBe('HTTP/1.1 200 OK');
    expect(lines).toContain('Content-Type: application/json');
    expect(lines).toContain(`Content-Length: ${Buffer.byteLength(r.stdout)}`);
    expect(r.stderr.endsWith('\n\n')).toBe(true);
  });

  it('a 404: exit 1, the body and the error on stderr, nothing on stdout', async () => {
    const emu = await start();
    const r = await cli(emu, ['api', '/api/aptlet/{board}/card/no-such-card']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(
      `{"error":"Not found"}\nerror: 404 Not Found from GET ${emu.url}/api/aptlet/${BOARD_ID}/card/no-such-card: Not found\nhint: Check the board id (\`cardboard board show\`) and the card id.\n`,
    );
  });

  it('a refused token: exit 4, as every command', async () => {
    const emu = await start();
    const r = await cli(emu, ['api', '/api/aptlet/{board}/schema'], { token: 'tok-wrong-0000' });
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/^error: 401 Unauthorized from GET /m);
  });

  it('the token goes in x-token only: never in the query, the path, argv or the output', async () => {
    const emu = await start({ pageSize: 2 });
    await seed(emu, 3);
    const args = ['api', 'GET', '/api/aptlet/{board}?x=1', '-f', 'y=2', '--paginate'];
    const r = await cli(emu, args);
    expect(r.code, r.stderr).toBe(0);
    expect(args.join(' ')).not.toContain(TOKEN);
    const seen = emu.requests();
    expect(seen.map((q) => q.path)).toEqual([0, 1, 2].map((p) => `/api/aptlet/${BOARD_ID}?x=1&y=2&page=${p}`));
    // The emulator masks the x-token it received: present, and nowhere else.
    for (const q of seen) {
      expect(q.headers['x-token']).toBe('***');
      expect(JSON.stringify(q)).not.toContain(TOKEN);
    }
  });

  it('a path or field that carries the token is refused (exit 2), nothing sent', async () => {
    const emu = await start();
    for (const args of [
      ['api', `/api/aptlet/{board}?token=${TOKEN}`],
      ['api', 'GET', '/api/aptlet/{board}', '-f', `t=${TOKEN}`],
      ['api', `/api/aptlet/${TOKEN}`],
    ]) {
      const r = await cli(emu, args);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain('error: the path or query holds the token');
    }
    expect(emu.requests()).toEqual([]);
  });

  it('a URL of another host is refused (exit 2) and that host hears nothing; a full URL on the base URL is sent', async () => {
    const emu = await start();
    const other = await hostile('plain');
    for (const url of [`${other.url}/api/aptlet/{board}`, `//127.0.0.1:${new URL(other.url).port}/api`]) {
      const r = await cli(emu, ['api', url]);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(/^error: (refusing to send the board's token to "http:\/\/127\.0\.0\.1:\d+"|the path .* starts with "\/\/")/m);
    }
    expect(other.requests).toEqual([]);
    expect(emu.requests()).toEqual([]);
    const r = await cli(emu, ['api', `${emu.url}/api/aptlet/{board}/schema`]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(emu.state()[BOARD_ID]!.fields);
  });

  it('Ctrl-C during a slow request stops the run: no output, no stack', async () => {
    const emu = await start({ faults: 'delay:60s' });
    const run = spawnApi(emu, ['api', '/api/aptlet/{board}']);
    await run.seen(() => emu.requests().length === 1, 'its request reached the server');
    run.child.kill('SIGINT');
    const end = await run.exit;
    expect(end.code === 130 || end.signal === 'SIGINT', JSON.stringify(end)).toBe(true);
    expect(run.stdout()).toBe('');
    expect(run.stderr()).not.toMatch(/\n\s+at /);
  });
});

describe('cardboard api retries as every command', () => {
  /** A server answering each request with the next status of `statuses` (then 200 with `{}`); counts by method. */
  async function flaky(statuses: number[], headers: Record<string, string> = {}) {
    const seen: string[] = [];
    const server = createServer((req: IncomingMessage, res: ServerResponse) => {
      req.resume();
      req.on('end', () => {
        seen.push(req.method!);
        const status = statuses.shift() ?? 200;
        res.writeHead(status, { 'content-type': 'application/json', ...(status === 200 ? {} : headers) }).end(status === 200 ? '{}' : '{"error":"boom"}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return { seen, env: { CARDBOARD_BASE_URL: url, CARDBOARD_BOARD: 'b1', CARDBOARD_TOKEN: 'tok-flaky-12345' } };
  }

  it('GET and HEAD are tried again after a 500', async () => {
    for (const method of ['GET', 'HEAD']) {
      const s = await flaky([500]);
      const time = skippingClock();
      const r = await runMain(['api', method, '/api/aptlet/{board}'], { env: s.env, context: time.context });
      expect(r.code, r.stderr).toBe(0);
      expect(s.seen).toEqual([method, method]);
      expect(time.waited.length).toBeGreaterThan(0);
    }
  });

  it('a POST answered 500 is not sent again (it may have been applied): exit 1', async () => {
    const s = await flaky([500]);
    const r = await runMain(['api', 'POST', '/api/aptlet/{board}', '-f', 'Name=x'], { env: s.env });
    expect(r.code).toBe(1);
    expect(s.seen).toEqual(['POST']);
    expect(r.stderr).toContain('{"error":"boom"}\nerror: 500 Internal Server Error from POST');
  });

  it('a POST answered 503 with Retry-After is sent again (the service did nothing)', async () => {
    const s = await flaky([503], { 'retry-after': '0' });
    const time = skippingClock();
    const r = await runMain(['api', 'POST', '/api/aptlet/{board}', '-f', 'Name=x'], { env: s.env, context: time.context });
    expect(r.code, r.stderr).toBe(0);
    expect(s.seen).toEqual(['POST', 'POST']);
    // The floor, though the service asked for no wait.
    expect(time.waited.some((ms) => ms >= 1000)).toBe(true);
  });
});
