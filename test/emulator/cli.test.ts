import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { BIN, childEnv, runCli } from '../helpers/cli.js';
import { DEMO_BOARD_ID, DEMO_SIGNING_KEY, DEMO_TOKEN } from '../../src/emulator/boards.js';
import { BOARD_ID, TEST_BOARDS, TOKEN } from '../helpers/emulator.js';

const BOARDS_FILE = fileURLToPath(new URL('../../fixtures/boards.json', import.meta.url));
const DEMO_BOARDS_FILE = fileURLToPath(new URL('../../fixtures/demo-boards.json', import.meta.url));

let child: ChildProcessWithoutNullStreams | undefined;
afterEach(() => {
  if (child && child.exitCode === null) child.kill('SIGKILL');
  child = undefined;
});

/** Spawn `cardboard emulator ...args`; resolves with its URL once it prints the ready line. */
function startCli(args: string[]) {
  const proc = spawn(process.execPath, [BIN, 'emulator', ...args], { env: childEnv() });
  child = proc;
  let stderr = '';
  let stdout = '';
  proc.stdout.on('data', (b: Buffer) => {
    stdout += b.toString();
  });
  /** The exit code, or the signal it ended by (a stop signal, once it has closed cleanly). */
  const exited = new Promise<number | NodeJS.Signals | null>((resolve) => proc.on('close', (code, signal) => resolve(signal ?? code)));
  const ready = new Promise<string>((resolve, reject) => {
    proc.stderr.on('data', (b: Buffer) => {
      stderr += b.toString();
      const m = /^listening on (http:\/\/127\.0\.0\.1:\d+)/m.exec(stderr);
      if (m) resolve(m[1]!);
    });
    void exited.then((code) => reject(new Error(`exited ${code} before ready: ${stderr}`)));
  });
  return { proc, ready, exited, stderr: () => stderr, stdout: () => stdout };
}

describe('cardboard emulator (built binary)', () => {
  it('serves a --boards file with --page-size, prints its URL, and stops on SIGTERM, ending by it', async () => {
    const cli = startCli(['--port', '0', '--boards', BOARDS_FILE, '--page-size', '2']);
    const url = await cli.ready;
    expect(url).not.toMatch(/:0$/);
    const headers = { 'x-token': TOKEN, 'content-type': 'application/json' };
    for (const name of ['a', 'b', 'c']) {
      const r = await fetch(`${url}/api/aptlet/${BOARD_ID}`, { method: 'POST', headers, body: JSON.stringify({ Name: name }) });
      expect(r.status).toBe(200);
    }
    const page = async (n: number) =>
      ((await (await fetch(`${url}/api/aptlet/${BOARD_ID}?page=${n}`, { headers })).json()) as { Name: string }[]).map((c) => c.Name);
    expect(await page(0)).toEqual(['a', 'b']);
    expect(await page(1)).toEqual(['c']);
    expect(await page(2)).toEqual([]);
    expect(cli.stderr()).toContain(`export CARDBOARD_BASE_URL=${url} CARDBOARD_BOARD=${BOARD_ID}`);
    // A file's tokens stay unprinted unless --print-tokens.
    expect(cli.stderr()).not.toContain(TOKEN);
    cli.proc.kill('SIGTERM');
    expect(await cli.exited).toBe('SIGTERM');
    expect(cli.stderr()).toContain('emulator stopped');
    expect(cli.stdout()).toBe('');
  });

  it('without --boards prints the demo board’s credentials as export lines; SIGINT stops it, and it ends by SIGINT', async () => {
    const cli = startCli(['--port', '0', '--seed-cards', '3']);
    const url = await cli.ready;
    const m = /export CARDBOARD_BASE_URL=(\S+) CARDBOARD_BOARD=(\S+) CARDBOARD_TOKEN=(\S+) CARDBOARD_SIGNING_KEY=(\S+)/.exec(cli.stderr());
    expect(m).not.toBeNull();
    const [, base, board, token, key] = m!;
    expect(base).toBe(url);
    // The fixed demo credentials of the README, the same after every restart.
    expect([board, token, key]).toEqual([DEMO_BOARD_ID, DEMO_TOKEN, DEMO_SIGNING_KEY]);
    const r = await fetch(`${url}/api/aptlet/${board}`, { headers: { 'x-token': token! } });
    expect(((await r.json()) as unknown[]).length).toBe(3);
    cli.proc.kill('SIGINT');
    expect(await cli.exited).toBe('SIGINT');
    expect(cli.stderr()).toContain('emulator stopped');
  });

  it('--print-tokens shows a file’s tokens', async () => {
    const cli = startCli(['--port', '0', '--boards', DEMO_BOARDS_FILE, '--print-tokens']);
    await cli.ready;
    expect(cli.stderr()).toContain(`CARDBOARD_BOARD=${DEMO_BOARD_ID} CARDBOARD_TOKEN=${DEMO_TOKEN}`);
    cli.proc.kill('SIGTERM');
    expect(await cli.exited).toBe('SIGTERM');
  });

  it.each([
    [['--faults', '503:2'], '--faults'],
    [['--faults', 'explode:0.1'], 'unknown fault'],
    [['--rate-limit', 'fast'], '--rate-limit'],
    [['--burst', '5'], '--burst needs --rate-limit'],
    [['--page-size', '0'], '--page-size'],
    [['--port', '70000'], '--port'],
    [['--boards', '/nonexistent/boards.json'], '--boards'],
    [['--boards', BIN], 'not valid JSON'],
    [['--host', '0.0.0.0'], 'not loopback'],
    [['--webhook-url', 'localhost:8787'], '--webhook-url: only http:// and https:// URLs are supported: localhost:8787'],
    [['--webhook-url', 'hooks'], '--webhook-url: not a URL: hooks'],
    // The deliveries carry the signing key: in clear only to loopback, as every signed URL.
    [['--webhook-url', 'http://hooks.example.com/'], 'Refusing plain http:// to hooks.example.com (--webhook-url)'],
  ])('exits 2 on %j', async (args, message) => {
    const r = await runCli(['emulator', ...args]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(message);
    expect(r.stdout).toBe('');
  });

  it('help shows the flags and examples', async () => {
    const r = await runCli(['emulator', '--help']);
    expect(r.code).toBe(0);
    for (const flag of ['--port', '--boards', '--page-size', '--rate-limit', '--burst', '--faults', '--seed-cards', '--webhook-url']) {
      expect(r.stdout).toContain(flag);
    }
    expect(r.stdout).toContain('Examples:');
  });
});

describe('fixtures', () => {
  it('fixtures/boards.json holds the test helper’s boards', () => {
    expect(JSON.parse(readFileSync(BOARDS_FILE, 'utf8'))).toEqual(TEST_BOARDS);
  });

  it('fixtures/demo-boards.json starts with the built-in demo board, so one stored alias works with both', () => {
    const [first, second] = Object.entries(JSON.parse(readFileSync(DEMO_BOARDS_FILE, 'utf8')) as Record<string, { token: string; signingKey: string; updateMode: string }>);
    expect(first![0]).toBe(DEMO_BOARD_ID);
    expect(first![1]).toMatchObject({ token: DEMO_TOKEN, signingKey: DEMO_SIGNING_KEY, updateMode: 'Update if exists' });
    expect(second![0]).toMatch(/^[23456789ABCDEFGHJKLMNPQRSTWXYZabcdefghijkmnopqrstuvwxyz]{17}$/);
    expect(second![1].updateMode).toBe('Always Create New');
  });
});
