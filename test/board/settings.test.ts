// Where settings come from: a named stored board keeps its URL and token, errors name the source
// of the failing part, `board show --json` keeps one shape, and an env-only run writes nothing under the config dir.
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runMain, tempDir } from '../helpers/cli.js';
import { BOARD_ID, type RunningEmulator, startTestEmulator, TOKEN } from '../helpers/emulator.js';

let emu: RunningEmulator;
beforeAll(async () => {
  emu = await startTestEmulator();
});
afterAll(async () => {
  await emu.close();
});

const STALE = 'tok-stale-999';
/** Nothing listens there: a request sent to it fails with ECONNREFUSED. */
const NOWHERE = 'http://127.0.0.1:9';

/** A config dir with "hook" (right token, the default) and "stale" (a token the service refuses). */
function configWithBoards(defaultBoard = 'hook'): string {
  const dir = join(tempDir(), 'cfg');
  mkdirSync(dir, { recursive: true });
  const boards = { hook: { id: BOARD_ID, baseUrl: emu.url, token: TOKEN }, stale: { id: BOARD_ID, baseUrl: emu.url, token: STALE } };
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ defaultBoard, boards }), { mode: 0o600 });
  return dir;
}

const hintOf = (stderr: string) => stderr.split('\n').find((l) => l.startsWith('hint: ')) ?? '';

describe('a stored board named explicitly keeps its own URL and token', () => {
  const leftover = { CARDBOARD_BASE_URL: NOWHERE, CARDBOARD_TOKEN: 'tok-leftover-1' };
  it.each([
    ['--board hook', ['--board', 'hook'], {}],
    ['-b hook', ['-b', 'hook'], {}],
    ['CARDBOARD_BOARD=hook', [], { CARDBOARD_BOARD: 'hook' }],
  ])('%s with a leftover CARDBOARD_BASE_URL and CARDBOARD_TOKEN', async (_, flags, env) => {
    const r = await runMain([...flags, 'schema', '--json', '--refresh'], { configDir: configWithBoards('stale'), env: { ...leftover, ...env } });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).map((f: { name: string }) => f.name)).toEqual(['Name', 'Status', 'Owner', 'Priority']);
  });

  it('while the default board gives way to the variables (the precedence table of docs/boards-and-credentials.md, row 3)', async () => {
    const r = await runMain(['schema', '--json', '--refresh'], { configDir: configWithBoards('hook'), env: { CARDBOARD_BASE_URL: emu.url, CARDBOARD_TOKEN: 'tok-leftover-1' } });
    expect(r.code).toBe(4);
    expect(hintOf(r.stderr)).toContain('refused the token from CARDBOARD_TOKEN');
  });
});

describe('a refused token: the hint names where it came from', () => {
  it('from CARDBOARD_TOKEN: check CARDBOARD_TOKEN, no `board add`', async () => {
    const r = await runMain(['schema', '--refresh'], { env: { CARDBOARD_BASE_URL: emu.url, CARDBOARD_BOARD: BOARD_ID, CARDBOARD_TOKEN: 'tok-wrong-1' } });
    expect(r.code).toBe(4);
    expect(hintOf(r.stderr)).toBe(`hint: The service refused the token from CARDBOARD_TOKEN: check CARDBOARD_TOKEN (it must be the API Key of board ${BOARD_ID}).`);
  });

  it('from a stored board: store it again with `board add <alias>`, no CARDBOARD_TOKEN', async () => {
    const r = await runMain(['-b', 'stale', 'card', 'get', 'c1'], { configDir: configWithBoards() });
    expect(r.code).toBe(4);
    expect(hintOf(r.stderr)).toBe('hint: The service refused the token from stored board "stale": store the current one with `cardboard board add stale --url <POST URL>`.');
    expect(r.stderr).not.toContain(STALE);
  });

  it('base URL and token from different places: the hint names both', async () => {
    const r = await runMain(['schema', '--refresh'], { configDir: configWithBoards('stale'), env: { CARDBOARD_BASE_URL: emu.url } });
    expect(r.code).toBe(4);
    expect(hintOf(r.stderr)).toContain('refused the token from stored board "stale"');
    expect(hintOf(r.stderr)).toContain('The base URL came from CARDBOARD_BASE_URL: is it the right service?');
  });
});

describe('board show --json: one shape in every state', () => {
  /** Each key's type, recursively: a changed type or a missing key shows as a difference. */
  const typeOf = (v: unknown): unknown =>
    v === null ? 'null' : typeof v === 'object' ? Object.fromEntries(Object.entries(v as object).map(([k, x]) => [k, typeOf(x)])) : typeof v;
  const SHAPE = (present: boolean) => {
    const s = (set: boolean) => (set ? 'string' : 'null');
    return {
      alias: expect.stringMatching(/^(string|null)$/),
      id: { value: s(present), source: s(present), from: s(present) },
      baseUrl: { value: s(present), source: s(present), from: s(present) },
      token: { set: 'boolean', source: s(present), from: s(present) },
      signingKey: { set: 'boolean', source: expect.stringMatching(/^(string|null)$/), from: expect.stringMatching(/^(string|null)$/) },
      ready: 'boolean',
      configFile: 'string',
      cacheDir: 'string',
    };
  };

  it('nothing set', async () => {
    const r = await runMain(['board', 'show', '--json']);
    expect(r.code).toBe(0);
    const shown = JSON.parse(r.stdout);
    expect(typeOf(shown)).toEqual(SHAPE(false));
    expect(shown).toMatchObject({ alias: null, id: { value: null, source: null, from: null }, token: { set: false }, ready: false });
  });

  it('variables only', async () => {
    const env = { CARDBOARD_BASE_URL: emu.url, CARDBOARD_BOARD: BOARD_ID, CARDBOARD_TOKEN: TOKEN, CARDBOARD_SIGNING_KEY: 'sk-env-1' };
    const r = await runMain(['board', 'show', '--json'], { env });
    const shown = JSON.parse(r.stdout);
    expect(typeOf(shown)).toEqual(SHAPE(true));
    expect(shown).toMatchObject({
      alias: null,
      id: { value: BOARD_ID, source: 'env', from: 'CARDBOARD_BOARD' },
      baseUrl: { value: emu.url, source: 'env', from: 'CARDBOARD_BASE_URL' },
      token: { set: true, source: 'env', from: 'CARDBOARD_TOKEN' },
      signingKey: { set: true, source: 'env', from: 'CARDBOARD_SIGNING_KEY' },
      ready: true,
    });
    expect(r.stdout).not.toContain(TOKEN);
    expect(r.stdout).not.toContain('sk-env-1');
  });

  it('stored (the default board)', async () => {
    const r = await runMain(['board', 'show', '--json'], { configDir: configWithBoards() });
    const shown = JSON.parse(r.stdout);
    expect(typeOf(shown)).toEqual(SHAPE(true));
    expect(shown).toMatchObject({
      alias: 'hook',
      id: { value: BOARD_ID, source: 'default', from: 'hook' },
      baseUrl: { value: emu.url, source: 'stored', from: 'hook' },
      token: { set: true, source: 'stored', from: 'hook' },
      signingKey: { set: false, source: null, from: null },
    });
    expect(r.stdout).not.toContain(TOKEN);
  });

  it("the example of docs/boards-and-credentials.md has the same keys and types as a real answer", async () => {
    const readme = readFileSync(new URL('../../docs/boards-and-credentials.md', import.meta.url), 'utf8');
    const after = readme.slice(readme.indexOf('`board show --json` always has every key below'));
    const example = JSON.parse(/```json\n([\s\S]*?)```/.exec(after)![1]!);
    // The state the example describes: "work" stored and the default, the token from CARDBOARD_TOKEN.
    const configDir = join(tempDir(), 'cfg');
    mkdirSync(configDir);
    const work = { id: '64f1c2e8', baseUrl: 'https://cards.example.com', token: 'tok-work-1' };
    writeFileSync(join(configDir, 'config.json'), JSON.stringify({ defaultBoard: 'work', boards: { work } }));
    const real = JSON.parse((await runMain(['board', 'show', '--json'], { configDir, env: { CARDBOARD_TOKEN: 'tok-env-3' } })).stdout);
    expect(typeOf(example)).toEqual(typeOf(real));
    expect({ ...example, configFile: real.configFile, cacheDir: real.cacheDir }).toEqual(real);
  });

  it('the plain form names each source', async () => {
    const r = await runMain(['board', 'show'], { configDir: configWithBoards(), env: { CARDBOARD_TOKEN: 'tok-env-2', CARDBOARD_SIGNING_KEY: 'sk-env-2' } });
    expect(r.stdout.split('\n').slice(0, 4)).toEqual([
      `board:        ${BOARD_ID} (alias hook)  (from the default board "hook")`,
      `base URL:     ${emu.url}  (from stored board "hook")`,
      'token:        set  (from CARDBOARD_TOKEN)',
      'signing key:  set  (from CARDBOARD_SIGNING_KEY)',
    ]);
    expect(r.stdout).not.toMatch(/tok-env-2|sk-env-2/);
    expect(r.stderr).toBe('');
  });

  it('the plain form says what is missing and how to give it', async () => {
    const none = await runMain(['board', 'show']);
    expect(none.stdout).toContain('token:        not set\n');
    expect(none.stderr).toContain('Incomplete: no board: pass --board <alias-or-id>, set CARDBOARD_BOARD');
    const noUrl = await runMain(['board', 'show'], { env: { CARDBOARD_BOARD: 'b-x' } });
    expect(noUrl.stderr).toContain('Incomplete: no base URL for board b-x: pass --base-url or set CARDBOARD_BASE_URL.');
    const noToken = await runMain(['--base-url', emu.url, 'board', 'show'], { env: { CARDBOARD_BOARD: 'b-x' } });
    expect(noToken.stderr).toContain('Incomplete: no token for board b-x: set CARDBOARD_TOKEN');
  });
});

describe('with only environment variables, nothing is written under the config dir', () => {
  it('schema, card put and card list leave the config dir absent and cache the schema in $XDG_CACHE_HOME/cardboard', async () => {
    const root = tempDir();
    const configDir = join(root, 'config');
    const cacheHome = join(root, 'xdg-cache');
    const env = { CARDBOARD_BASE_URL: emu.url, CARDBOARD_BOARD: BOARD_ID, CARDBOARD_TOKEN: TOKEN, XDG_CACHE_HOME: cacheHome };
    for (const args of [['schema', '--json'], ['card', 'put', 'Name=from CI'], ['card', 'list', '--format', 'json']]) {
      const r = await runMain(args, { configDir, env, spawn: true });
      expect([args.join(' '), r.code, r.stderr]).toEqual([args.join(' '), 0, '']);
    }
    expect(existsSync(configDir)).toBe(false);
    const dir = join(cacheHome, 'cardboard');
    // Beside the schema, Node >= 22.8 keeps its compile cache there (src/compile-cache.ts).
    const files = readdirSync(dir).filter((f) => f !== 'compile-cache');
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(/^schema-[0-9a-f]{20}\.json$/);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, files[0]!)).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(dir, files[0]!), 'utf8')).not.toContain(TOKEN);
  });

  it('an unwritable cache dir does not fail the command; --verbose says why', async () => {
    const blocker = join(tempDir(), 'a-file');
    writeFileSync(blocker, '');
    const env = { CARDBOARD_BASE_URL: emu.url, CARDBOARD_BOARD: BOARD_ID, CARDBOARD_TOKEN: TOKEN, CARDBOARD_CACHE_DIR: join(blocker, 'cache') };
    const quiet = await runMain(['schema', '--json'], { env });
    expect([quiet.code, quiet.stderr]).toEqual([0, '']);
    const verbose = await runMain(['schema', '--json', '--verbose'], { env });
    expect(verbose.code).toBe(0);
    expect(verbose.stderr).toContain(`[cache] Cannot write the schema cache ${join(blocker, 'cache')}`);
    expect(verbose.stderr).toContain('CARDBOARD_CACHE_DIR moves the cache');
  });
});
