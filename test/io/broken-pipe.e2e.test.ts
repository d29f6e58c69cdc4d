// A reader that goes away (`| head -1`) ends every command quietly with exit 0. It used to
// print `error: write EPIPE … This is a bug` and exit 1 (schema 5 of 5 runs, card get 16 of 20, board list
// 4 of 5). Outputs here are larger than a pipe's buffer (64 KiB), so the reader always leaves first, and
// each command runs twice: the failure was a race before.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, CHILD_KILL_MS, childEnv, runMain, tempDir } from '../helpers/cli.js';
import { BOARD_ID, type RunningEmulator, SIGNING_KEY, startTestEmulator, TOKEN } from '../helpers/emulator.js';

const FIELDS = Array.from({ length: 1500 }, (_, i) => `Field ${String(i).padStart(4, '0')} with a long enough name`);
const RUNS = 2;

let emulator: RunningEmulator;
let configDir: string;
let env: Record<string, string>;
let cardId: string;

beforeAll(async () => {
  emulator = await startTestEmulator({
    boards: { [BOARD_ID]: { token: TOKEN, fields: FIELDS, updateMode: 'Update if exists', createFields: false, webhookUrl: null, signingKey: SIGNING_KEY } },
    seedCards: 400,
  });
  configDir = tempDir();
  const boards = Object.fromEntries(Array.from({ length: 1500 }, (_, i) => [`alias-${i}`, { id: `board-${i}`, baseUrl: 'http://127.0.0.1:9', token: `token-number-${i}` }]));
  writeFileSync(join(configDir, 'config.json'), JSON.stringify({ defaultBoard: 'alias-0', boards }), { mode: 0o600 });
  env = { CARDBOARD_BASE_URL: emulator.url, CARDBOARD_BOARD: BOARD_ID, CARDBOARD_TOKEN: TOKEN };
  const data = JSON.stringify(Object.fromEntries(FIELDS.map((f) => [f, `a value of ${f}`])));
  const put = await runMain(['card', 'put', '--data', data], { env, configDir });
  expect(put.stderr).toBe('');
  cardId = put.stdout.trim();
});
afterAll(() => emulator.close());

/**
 * Run `cardboard args | reader` RUNS times in one bash (spawned asynchronously: the emulator answers from
 * this process); the exit codes of cardboard, one a line, and what was written on stderr.
 */
function piped(args: string[], reader: string): Promise<{ codes: string; stderr: string }> {
  const loop = `for ((i = 0; i < ${RUNS}; i++)); do "$NODE" "$BIN" "$@" | ${reader} > /dev/null; echo "\${PIPESTATUS[0]}"; done`;
  const child = spawn('bash', ['-c', loop, 'bash', ...args], {
    env: { ...childEnv({ configDir, env }), NODE: process.execPath, BIN },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return collect(child);
}

function collect(child: ChildProcess): Promise<{ codes: string; stderr: string }> {
  let codes = '';
  let stderr = '';
  child.stdout!.on('data', (b: Buffer) => (codes += b.toString()));
  child.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), CHILD_KILL_MS);
  return new Promise((resolve) => child.on('close', () => {
    clearTimeout(timer);
    resolve({ codes, stderr });
  }));
}

describe('a closed pipe', () => {
  // head -1 reads a line and leaves while cardboard is blocked writing the rest (more than a pipe holds).
  it.each([
    [['schema']],
    [['card', 'get', 'CARD']],
    [['card', 'get', 'CARD', '--json']],
    [['board', 'list']],
    [['card', 'list', '--all']],
  ])('%j | head -1 exits 0 and prints nothing on stderr', async (args) => {
    const r = await piped(args.map((a) => (a === 'CARD' ? cardId : a)), 'head -1');
    expect(r.stderr).toBe('');
    expect(r.codes).toBe('0\n'.repeat(RUNS));
  });

  // `true` has left before cardboard writes at all: the first write fails, also a plain stdout.write.
  it.each([[['schema', '--json']], [['completion', 'bash']], [['board', 'list', '--json']], [['--version']], [['--help']]])('%j | true exits 0 and prints nothing on stderr', async (args) => {
    const r = await piped(args, 'true');
    expect(r.stderr).toBe('');
    expect(r.codes).toBe('0\n'.repeat(RUNS));
  });

  it('a parent that closes its end of the socket after the first chunk: exit 0, nothing on stderr', async () => {
    const child = spawn(process.execPath, [BIN, 'schema'], { env: childEnv({ configDir, env }), stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.once('data', () => child.stdout.destroy());
    let stderr = '';
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    const [code] = (await once(child, 'close')) as [number | null];
    expect(stderr).toBe('');
    expect(code).toBe(0);
  });
});

describe('a closed pipe under a long run', () => {
  it('webhook listen stops as on SIGTERM when its stdout reader goes away: exit 0, no error', async () => {
    const child = spawn(process.execPath, [BIN, 'webhook', 'listen', '--port', '0', '--no-verify'], {
      env: childEnv({ configDir, env }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    const listening = new Promise<string>((resolve) => {
      child.stderr.on('data', (b: Buffer) => {
        stderr += b.toString();
        const m = /Listening on (\S+)/.exec(stderr);
        if (m) resolve(m[1]!);
      });
    });
    const closed = once(child, 'close');
    // A listener that does not stop is killed when the test ends, pass or fail.
    const guard = setTimeout(() => child.kill('SIGKILL'), CHILD_KILL_MS);
    try {
      const url = await listening;
      child.stdout.once('data', () => child.stdout.destroy());
      // Deliveries until the listener has noticed: each one is a line on the closed stdout.
      for (let i = 0; i < 50 && child.exitCode === null; i++) {
        await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ _id: `c${i}`, Name: 'x' }) }).catch(() => undefined);
        await new Promise((r) => setTimeout(r, 20));
      }
      const [code, signal] = (await closed) as [number | null, NodeJS.Signals | null];
      expect(stderr).not.toMatch(/error|bug/i);
      expect(signal).toBeNull();
      expect(code).toBe(0);
    } finally {
      clearTimeout(guard);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  });
});
