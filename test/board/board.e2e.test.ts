import { existsSync, readFileSync, statSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runMain, tempDir } from '../helpers/cli.js';
import { BOARD_ID, CREATE_NEW_BOARD_ID, CREATE_NEW_TOKEN, type RunningEmulator, startTestEmulator, TOKEN } from '../helpers/emulator.js';

let emu: RunningEmulator;
beforeAll(async () => {
  emu = await startTestEmulator();
});
afterAll(async () => {
  await emu.close();
});

const postUrl = (board = BOARD_ID) => `${emu.url}/api/aptlet/${board}`;
const configFile = (dir: string) => join(dir, 'config.json');

/** A config dir holding board "work" (default) and "other", added through the CLI. */
async function twoBoards(): Promise<string> {
  const configDir = join(tempDir(), 'cfg');
  expect((await runMain(['board', 'add', 'work', '--url', postUrl(), '--token-stdin'], { configDir, input: `${TOKEN}\n` })).code).toBe(0);
  const other = await runMain(['board', 'add', 'other', '--url', postUrl(CREATE_NEW_BOARD_ID), '--token-stdin'], { configDir, input: CREATE_NEW_TOKEN });
  expect(other.code).toBe(0);
  return configDir;
}

describe('board add', () => {
  it('verifies the token against the schema endpoint, then stores it 0600 in a 0700 dir', async () => {
    const configDir = join(tempDir(), 'cfg');
    emu.resetRequests();
    const r = await runMain(['board', 'add', 'work', '--url', postUrl(), '--token-stdin'], { configDir, input: `${TOKEN}\n`, spawn: true });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`Saved board "work" (id ${BOARD_ID} at ${emu.url}; verified, 4 fields), the default board.`);
    expect(r.stderr).not.toContain(TOKEN);
    expect(emu.requests().map((q) => `${q.method} ${q.path} ${q.status}`)).toEqual([`GET /api/aptlet/${BOARD_ID}/schema 200`]);
    expect(statSync(configDir).mode & 0o777).toBe(0o700);
    expect(statSync(configFile(configDir)).mode & 0o777).toBe(0o600);
    const stored = JSON.parse(readFileSync(configFile(configDir), 'utf8'));
    expect(stored).toEqual({ defaultBoard: 'work', boards: { work: { id: BOARD_ID, baseUrl: emu.url, token: TOKEN } } });
  });

  it('exits 4 and saves nothing when the service refuses the token', async () => {
    const configDir = join(tempDir(), 'cfg');
    const r = await runMain(['board', 'add', 'work', '--url', postUrl(), '--token-stdin'], { configDir, input: 'wrong-token-987\n' });
    expect(r.code).toBe(4);
    expect(r.stderr).toContain('refused the token');
    expect(r.stderr).toContain('nothing was saved');
    expect(r.stderr).toContain('hint: Copy the API Key of this board again (Card Sources → API)');
    expect(r.stderr).not.toContain('wrong-token-987');
    expect(existsSync(configFile(configDir))).toBe(false);
  });

  it('takes --base-url with --id, and two stdin lines for token and signing key', async () => {
    const configDir = join(tempDir(), 'cfg');
    const r = await runMain(['board', 'add', 'ci', '--base-url', emu.url, '--id', BOARD_ID, '--token-stdin', '--signing-key-stdin'], {
      configDir,
      input: `${TOKEN}\nsk-typed\n`,
    });
    expect(r.code).toBe(0);
    expect(JSON.parse(readFileSync(configFile(configDir), 'utf8')).boards.ci).toEqual({ id: BOARD_ID, baseUrl: emu.url, token: TOKEN, signingKey: 'sk-typed' });
  });

  it('refuses without a terminal or --token-stdin, and never takes a token flag', async () => {
    const r = await runMain(['board', 'add', 'work', '--url', postUrl()]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--token-stdin');
    expect((await runMain(['board', 'add', 'work', '--url', postUrl(), '--token', TOKEN])).code).toBe(2);
  });

  it('refuses plain http:// to a non-loopback host (exit 2, nothing sent) unless --insecure', async () => {
    const configDir = join(tempDir(), 'cfg');
    const args = ['board', 'add', 'far', '--url', 'http://cards.example.com/api/aptlet/b1', '--token-stdin', '--no-verify'];
    const refused = await runMain(args, { configDir, input: 'tok-far' });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('Refusing plain http:// to cards.example.com');
    expect(existsSync(configFile(configDir))).toBe(false);
    const allowed = await runMain([...args, '--insecure'], { configDir, input: 'tok-far' });
    expect(allowed.code).toBe(0);
    expect(allowed.stderr).toContain('not verified');
  });
});

describe('board list, use, remove, show', () => {
  it('lists boards with the default marked and no secret', async () => {
    const configDir = await twoBoards();
    const tsv = await runMain(['board', 'list'], { configDir });
    expect(tsv.code).toBe(0);
    expect(tsv.stdout).toBe(
      `alias\tid\tbaseUrl\tdefault\nother\t${CREATE_NEW_BOARD_ID}\t${emu.url}\t\nwork\t${BOARD_ID}\t${emu.url}\tdefault\n`,
    );
    const json = await runMain(['board', 'list', '--json'], { configDir });
    expect(JSON.parse(json.stdout)).toEqual([
      { alias: 'other', id: CREATE_NEW_BOARD_ID, baseUrl: emu.url, default: false, signingKey: false },
      { alias: 'work', id: BOARD_ID, baseUrl: emu.url, default: true, signingKey: false },
    ]);
    for (const out of [tsv.stdout, tsv.stderr, json.stdout]) {
      expect(out).not.toContain(TOKEN);
      expect(out).not.toContain(CREATE_NEW_TOKEN);
    }
  });

  it('switches the default with use, and forgets a board with remove', async () => {
    const configDir = await twoBoards();
    const use = await runMain(['board', 'use', 'other'], { configDir });
    expect(use.code).toBe(0);
    expect(JSON.parse(readFileSync(configFile(configDir), 'utf8')).defaultBoard).toBe('other');
    const unknown = await runMain(['board', 'use', 'nope'], { configDir });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('Stored boards: work, other');
    const rm = await runMain(['board', 'remove', 'other'], { configDir });
    expect(rm.code).toBe(0);
    expect(rm.stderr).toContain('No default board now');
    const after = JSON.parse(readFileSync(configFile(configDir), 'utf8'));
    expect(Object.keys(after.boards)).toEqual(['work']);
    expect(after.defaultBoard).toBeUndefined();
    expect(statSync(configFile(configDir)).mode & 0o777).toBe(0o600);
  });

  it('shows what a command would use and where each part came from, never the secrets', async () => {
    const configDir = await twoBoards();
    const plain = await runMain(['board', 'show'], { configDir });
    expect(plain.stdout).toContain(`board:        ${BOARD_ID} (alias work)  (from the default board "work")`);
    expect(plain.stdout).toContain('token:        set  (from stored board "work")');
    expect(plain.stdout).toContain('signing key:  not set\n');
    const env = { CARDBOARD_TOKEN: 'tok-from-env', CARDBOARD_BASE_URL: 'https://env.example', CARDBOARD_SIGNING_KEY: 'sk-env' };
    const before = await runMain(['--board', 'other', 'board', 'show', '--json'], { configDir, env });
    const after = await runMain(['board', 'show', '--json', '--board', 'other'], { configDir, env });
    expect(before.stdout).toBe(after.stdout);
    // A board named with --board keeps its own URL and token; only the signing key it lacks comes from the environment.
    expect(JSON.parse(after.stdout)).toEqual({
      alias: 'other',
      id: { value: CREATE_NEW_BOARD_ID, source: 'flag', from: '--board' },
      baseUrl: { value: emu.url, source: 'stored', from: 'other' },
      token: { set: true, source: 'stored', from: 'other' },
      signingKey: { set: true, source: 'env', from: 'CARDBOARD_SIGNING_KEY' },
      ready: true,
      configFile: configFile(configDir),
      cacheDir: join(`${configDir}-xdg-cache`, 'cardboard'),
    });
    for (const out of [plain.stdout, after.stdout]) {
      for (const secret of [TOKEN, CREATE_NEW_TOKEN, 'tok-from-env', 'sk-env']) expect(out).not.toContain(secret);
    }
  });

  it('stores a signing key with set-signing-key from stdin', async () => {
    const configDir = await twoBoards();
    const r = await runMain(['board', 'set-signing-key', 'work'], { configDir, input: 'sk-stored\n' });
    expect(r.code).toBe(0);
    expect(r.stderr).not.toContain('sk-stored');
    expect(JSON.parse(readFileSync(configFile(configDir), 'utf8')).boards.work.signingKey).toBe('sk-stored');
    const show = await runMain(['board', 'show', '--json'], { configDir });
    expect(JSON.parse(show.stdout).signingKey).toEqual({ set: true, source: 'stored', from: 'work' });
  });
});

describe('credentials in use', () => {
  it('works in CI with only environment variables and creates no config file', async () => {
    const configDir = join(tempDir(), 'cfg');
    const env = { CARDBOARD_BASE_URL: emu.url, CARDBOARD_BOARD: BOARD_ID, CARDBOARD_TOKEN: TOKEN };
    const r = await runMain(['schema', '--json'], { configDir, env, spawn: true });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).map((f: { name: string }) => f.name)).toEqual(['Name', 'Status', 'Owner', 'Priority']);
    expect(existsSync(configFile(configDir))).toBe(false);
  });

  it('exits 4 with a `board add` hint when there is no token', async () => {
    const r = await runMain(['schema'], { env: { CARDBOARD_BASE_URL: emu.url, CARDBOARD_BOARD: BOARD_ID } });
    expect(r.code).toBe(4);
    expect(r.stderr).toContain(`error: No token for board ${BOARD_ID} (from CARDBOARD_BOARD).`);
    expect(r.stderr).toContain('cardboard board add');
  });

  it('logs requests with --verbose, with the token redacted everywhere', async () => {
    const configDir = await twoBoards();
    const r = await runMain(['schema', '--refresh', '--verbose', '--json'], { configDir });
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(new RegExp(`\\[http\\] GET ${emu.url}/api/aptlet/${BOARD_ID}/schema → 200 \\(\\d+ ms\\)`));
    expect(r.stdout + r.stderr).not.toContain(TOKEN);
    for (const q of emu.requests()) expect(q.path).not.toContain(TOKEN);
  });

  it('refuses an http:// base URL off loopback before sending, and --insecure lets it through', async () => {
    const lan = Object.values(networkInterfaces())
      .flat()
      .find((i) => i && i.family === 'IPv4' && !i.internal)?.address;
    const env = { CARDBOARD_BASE_URL: `http://${lan ?? '192.0.2.1'}:${emu.port}`, CARDBOARD_BOARD: BOARD_ID, CARDBOARD_TOKEN: TOKEN };
    const refused = await runMain(['schema', '--json'], { env });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--insecure');
    if (!lan) return;
    // The emulator listens on 127.0.0.1 only: with --insecure the request is sent and fails on the network (exit 1, not 2).
    const sent = await runMain(['schema', '--json', '--insecure', '--timeout', '5s'], { env });
    expect(sent.code).toBe(1);
    expect(sent.stderr).toMatch(/ECONNREFUSED|UND_ERR_CONNECT_TIMEOUT/);
    expect(sent.stderr).toContain('Check the base URL');
  });
});
