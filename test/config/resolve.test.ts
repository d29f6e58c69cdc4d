import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, sep } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parsePostUrl, resolveCredentials, resolveSelection, resolveSigningKey } from '../../src/config/resolve.js';
import { readSchemaCache, schemaCachePath, writeSchemaCache } from '../../src/config/schema-cache.js';
import { cacheDir, type CardboardConfig, configPath, configStore } from '../../src/config/store.js';
import { type Context, createContext, type GlobalOptions } from '../../src/context.js';
import { AuthError, UsageError } from '../../src/errors.js';
import { tempDir } from '../helpers/cli.js';

const CONFIG: CardboardConfig = {
  defaultBoard: 'work',
  boards: {
    work: { id: 'b-work', baseUrl: 'https://work.example', token: 'tok-work', signingKey: 'sk-work' },
    side: { id: 'b-side', baseUrl: 'https://side.example', token: 'tok-side' },
  },
};

function ctxWith(env: Record<string, string> = {}, globals: GlobalOptions = {}): Context {
  return createContext({ env: { CARDBOARD_CONFIG_DIR: tempDir(), ...env }, globals });
}

describe('POST URL parsing', () => {
  it('splits base URL and board id', () => {
    expect(parsePostUrl('https://cards.example.com/api/aptlet/64f1c2')).toEqual({ baseUrl: 'https://cards.example.com', id: '64f1c2' });
    expect(parsePostUrl('https://h.example/prefix/api/aptlet/b%20x/')).toEqual({ baseUrl: 'https://h.example/prefix', id: 'b x' });
    expect(parsePostUrl('http://127.0.0.1:8080/api/aptlet/b/schema')).toEqual({ baseUrl: 'http://127.0.0.1:8080', id: 'b' });
  });
  it('rejects URLs that are not a board POST URL', () => {
    expect(() => parsePostUrl('https://h.example/api/card/x/comment')).toThrow(UsageError);
    expect(() => parsePostUrl('h.example/api/aptlet/b')).toThrow(UsageError);
  });
});

describe('precedence: flags > env > config', () => {
  it('uses the default board from config', () => {
    const { board, token } = resolveCredentials(ctxWith(), CONFIG);
    expect(board).toEqual({
      id: 'b-work',
      baseUrl: 'https://work.example',
      alias: 'work',
      sources: { id: 'config', baseUrl: 'config', token: 'config' },
      origins: { id: { kind: 'default', name: 'work' }, baseUrl: { kind: 'stored', name: 'work' }, token: { kind: 'stored', name: 'work' } },
    });
    expect(token).toBe('tok-work');
  });

  it('lets CARDBOARD_BOARD pick an alias and --board beat it', () => {
    expect(resolveCredentials(ctxWith({ CARDBOARD_BOARD: 'side' }), CONFIG).board.alias).toBe('side');
    const r = resolveCredentials(ctxWith({ CARDBOARD_BOARD: 'side' }, { board: 'work' }), CONFIG);
    expect([r.board.alias, r.board.sources.id]).toEqual(['work', 'flag']);
  });

  it('uses a stored board when --board is its id', () => {
    const r = resolveCredentials(ctxWith({}, { board: 'b-side' }), CONFIG);
    expect([r.board.alias, r.board.id, r.token]).toEqual(['side', 'b-side', 'tok-side']);
  });

  it('overrides base URL and token from env, and base URL from the flag over env', () => {
    const ctx = ctxWith({ CARDBOARD_BASE_URL: 'https://env.example', CARDBOARD_TOKEN: 'tok-env' });
    const r = resolveCredentials(ctx, CONFIG);
    expect([r.board.baseUrl, r.board.sources.baseUrl, r.token, r.board.sources.token]).toEqual(['https://env.example', 'env', 'tok-env', 'env']);
    const f = resolveCredentials(ctxWith({ CARDBOARD_BASE_URL: 'https://env.example' }, { baseUrl: 'https://flag.example' }), CONFIG);
    expect([f.board.baseUrl, f.board.sources.baseUrl]).toEqual(['https://flag.example', 'flag']);
  });

  it('works in CI with env only and no config file, and creates none', async () => {
    const ctx = ctxWith({ CARDBOARD_BASE_URL: 'https://ci.example', CARDBOARD_BOARD: 'b-ci', CARDBOARD_TOKEN: 'tok-ci' });
    const r = resolveCredentials(ctx, await ctx.config.read());
    expect(r.board).toMatchObject({ id: 'b-ci', baseUrl: 'https://ci.example', alias: undefined, sources: { id: 'env', baseUrl: 'env', token: 'env' } });
    expect(r.board.origins?.token).toEqual({ kind: 'env', name: 'CARDBOARD_TOKEN' });
    expect(existsSync(configPath(ctx.env))).toBe(false);
  });

  it('names what is missing: board (exit 2), base URL (exit 2), token (exit 4)', () => {
    expect(() => resolveCredentials(ctxWith(), { boards: {} })).toThrow(UsageError);
    expect(() => resolveCredentials(ctxWith({ CARDBOARD_BOARD: 'b-x', CARDBOARD_TOKEN: 't' }), { boards: {} })).toThrow(/No base URL/);
    const noToken = () => resolveCredentials(ctxWith({ CARDBOARD_BOARD: 'b-x', CARDBOARD_BASE_URL: 'https://x.example' }), { boards: {} });
    expect(noToken).toThrow(AuthError);
    expect(noToken).toThrow(/No token/);
  });

  it('reports sources without failing on missing parts', () => {
    const sel = resolveSelection(ctxWith({ CARDBOARD_SIGNING_KEY: 'sk-env' }), CONFIG);
    expect(sel.signingKey).toEqual({ value: 'sk-env', source: 'env', origin: { kind: 'env', name: 'CARDBOARD_SIGNING_KEY' } });
    expect(resolveSelection(ctxWith(), { boards: {} })).toEqual({ alias: undefined, baseUrl: undefined });
  });

  it('resolves the signing key from env, else the selected board', async () => {
    const ctx = ctxWith();
    writeFileSync(configPath(ctx.env), JSON.stringify(CONFIG));
    expect(resolveSigningKey(ctx, await ctx.config.read())).toEqual({ key: 'sk-work', source: 'config', origin: { kind: 'stored', name: 'work' }, from: 'stored board "work"' });
    const side = ctxWith(ctx.env as Record<string, string>, { board: 'side' });
    expect(resolveSigningKey(side, await side.config.read())).toBeUndefined();
  });
});

describe('a POST URL as the base URL (--base-url, CARDBOARD_BASE_URL)', () => {
  const POST = 'https://cards.example/svc/api/aptlet/b%20x%2F1';
  const error = (f: () => unknown) => {
    try {
      f();
    } catch (err) {
      return err as UsageError;
    }
    throw new Error('no error');
  };

  it('is read as the base URL before /api/aptlet plus its board, decoded; /schema and a trailing slash are tolerated', () => {
    for (const url of [POST, `${POST}/`, `${POST}/schema`, `${POST}/schema/`]) {
      const r = resolveCredentials(ctxWith({ CARDBOARD_BASE_URL: url, CARDBOARD_TOKEN: 'tok-ci' }), { boards: {} });
      expect([r.board.id, r.board.baseUrl, r.token], url).toEqual(['b x/1', 'https://cards.example/svc', 'tok-ci']);
      expect(r.board.origins?.id).toEqual({ kind: 'env', name: 'CARDBOARD_BASE_URL' });
    }
    const f = resolveCredentials(ctxWith({ CARDBOARD_TOKEN: 'tok-ci' }, { baseUrl: POST }), { boards: {} });
    expect([f.board.id, f.board.baseUrl, f.board.origins?.id.name]).toEqual(['b x/1', 'https://cards.example/svc', '--base-url']);
    // Any other URL is left as it is.
    for (const url of ['https://h.example/api/aptlet', 'https://h.example/prefix/', 'ftp://h.example/api/aptlet/b', 'not a url']) {
      const sel = resolveSelection(ctxWith({ CARDBOARD_BASE_URL: url, CARDBOARD_BOARD: 'b-x' }), { boards: {} });
      expect([sel.id?.value, sel.baseUrl?.value], url).toEqual(['b-x', url]);
    }
  });

  it('its board beats the default board, whose token is then not used', () => {
    const ctx = ctxWith({ CARDBOARD_BASE_URL: 'https://ci.example/api/aptlet/b-ci' });
    const sel = resolveSelection(ctx, CONFIG);
    expect([sel.alias, sel.id?.value, sel.baseUrl?.value, sel.token]).toEqual([undefined, 'b-ci', 'https://ci.example', undefined]);
    expect(() => resolveCredentials(ctx, CONFIG)).toThrow(/No token for board b-ci \(from CARDBOARD_BASE_URL\)/);
  });

  it('names a stored board by its id at that base URL (never by alias), which brings its own token', () => {
    const ctx = ctxWith({ CARDBOARD_TOKEN: 'tok-env' }, { baseUrl: 'https://side.example/api/aptlet/b-side' });
    expect(resolveCredentials(ctx, CONFIG)).toMatchObject({ board: { id: 'b-side', alias: 'side', baseUrl: 'https://side.example' }, token: 'tok-side' });
    const alias = resolveSelection(ctxWith({ CARDBOARD_BASE_URL: 'https://x.example/api/aptlet/side' }), CONFIG);
    expect([alias.alias, alias.id?.value]).toEqual([undefined, 'side']);
  });

  it('with --board or CARDBOARD_BOARD naming the same board (its id, or an alias stored with it), goes ahead', () => {
    expect(resolveCredentials(ctxWith({ CARDBOARD_TOKEN: 't' }, { board: 'b x/1', baseUrl: POST }), { boards: {} }).board.id).toBe('b x/1');
    const r = resolveCredentials(ctxWith({}, { board: 'side', baseUrl: 'https://other.example/api/aptlet/b-side' }), CONFIG);
    expect([r.board.alias, r.board.baseUrl, r.token]).toEqual(['side', 'https://other.example', 'tok-side']);
  });

  it('with --board or CARDBOARD_BOARD naming another board: a usage error naming both', () => {
    const flag = error(() => resolveSelection(ctxWith({}, { board: 'b-other', baseUrl: POST }), { boards: {} }));
    expect(flag).toBeInstanceOf(UsageError);
    expect(flag.message).toBe('--base-url is the POST URL of board b x/1, but --board names board b-other.');
    expect(flag.hint).toBe('Give one board: drop --board, or give the base URL without /api/aptlet/<board id>.');
    const env = error(() => resolveSelection(ctxWith({ CARDBOARD_BOARD: 'b-other', CARDBOARD_BASE_URL: POST }), { boards: {} }));
    expect(env.message).toBe('CARDBOARD_BASE_URL is the POST URL of board b x/1, but CARDBOARD_BOARD names board b-other.');
    const mixed = error(() => resolveSelection(ctxWith({ CARDBOARD_BOARD: 'b-other' }, { baseUrl: POST }), { boards: {} }));
    expect(mixed.message).toBe('--base-url is the POST URL of board b x/1, but CARDBOARD_BOARD names board b-other.');
    const alias = error(() => resolveSelection(ctxWith({}, { board: 'work', baseUrl: POST }), CONFIG));
    expect(alias.message).toBe('--base-url is the POST URL of board b x/1, but --board names board b-work (stored board "work").');
    // Only the URL in use names a board: a leftover CARDBOARD_BASE_URL that a named stored board ignores does not,
    // nor one a plain --base-url overrides.
    const sel = resolveSelection(ctxWith({ CARDBOARD_BOARD: 'side', CARDBOARD_BASE_URL: POST }), CONFIG);
    expect([sel.id?.value, sel.baseUrl?.value]).toEqual(['b-side', 'https://side.example']);
    const plain = resolveSelection(ctxWith({ CARDBOARD_BASE_URL: POST }, { baseUrl: 'https://flag.example' }), CONFIG);
    expect([plain.id?.value, plain.baseUrl?.value]).toEqual(['b-work', 'https://flag.example']);
  });

  it('a broken percent escape is a usage error once that URL is in use', () => {
    const broken = 'https://h.example/api/aptlet/50%zz';
    expect(error(() => resolveSelection(ctxWith({ CARDBOARD_BASE_URL: broken }), { boards: {} })).message).toBe(
      'The board id in CARDBOARD_BASE_URL has a broken percent escape: 50%zz',
    );
    expect(resolveSelection(ctxWith({ CARDBOARD_BOARD: 'side', CARDBOARD_BASE_URL: broken }), CONFIG).id?.value).toBe('b-side');
  });

});

describe('config store', () => {
  it('reads a missing file as empty without creating it', async () => {
    const env = { CARDBOARD_CONFIG_DIR: join(tempDir(), 'nested', 'cfg') };
    expect(await configStore(env).read()).toEqual({ boards: {} });
    expect(existsSync(env.CARDBOARD_CONFIG_DIR)).toBe(false);
  });

  it('writes the file 0600 in a 0700 directory it creates, and leaves an existing 0755 directory as it is', async () => {
    const created = { CARDBOARD_CONFIG_DIR: join(tempDir(), 'new-cfg') };
    await configStore(created).update((c) => {
      c.boards.a = { id: 'b', baseUrl: 'https://h.example', token: 't' };
    });
    expect(statSync(created.CARDBOARD_CONFIG_DIR).mode & 0o777).toBe(0o700);
    // An existing directory may be shared (CARDBOARD_CONFIG_DIR=/tmp): its mode is not cardboard's to change.
    const dir = join(tempDir(), 'cfg');
    mkdirSync(dir, { mode: 0o755 });
    chmodSync(dir, 0o755);
    const env = { CARDBOARD_CONFIG_DIR: dir };
    await configStore(env).update((c) => {
      c.boards.a = { id: 'b', baseUrl: 'https://h.example', token: 't' };
    });
    expect(statSync(dir).mode & 0o777).toBe(0o755);
    expect(statSync(configPath(env)).mode & 0o777).toBe(0o600);
    expect((await configStore(env).read()).boards.a).toEqual({ id: 'b', baseUrl: 'https://h.example', token: 't' });
  });

  it('rejects a config file of the wrong shape or broken JSON with exit 2, naming the file and the flaw (conf and its schema)', async () => {
    const env = { CARDBOARD_CONFIG_DIR: tempDir() };
    writeFileSync(configPath(env), JSON.stringify({ boards: { a: { id: 1 } } }));
    const wrong = await configStore(env).read().catch((e: unknown) => e);
    expect(wrong).toBeInstanceOf(UsageError);
    expect((wrong as Error).message).toBe(`The config file ${configPath(env)} is not a cardboard config: \`boards/a\` must have required property 'baseUrl'.`);
    writeFileSync(configPath(env), '{"boards": {');
    const broken = await configStore(env).read().catch((e: unknown) => e);
    expect(broken).toBeInstanceOf(UsageError);
    expect((broken as Error).message).toBe(`The config file ${configPath(env)} is not valid JSON.`);
  });

  it('caches a schema per board and token for the TTL, 0600, without the token', () => {
    const env = { CARDBOARD_CONFIG_DIR: tempDir(), XDG_CACHE_HOME: tempDir() };
    const fields = [{ name: 'Name', uuid: 'u1' }];
    const token = 'tok-cache-SECRET-123';
    writeSchemaCache(env, 'https://h.example', 'b', token, fields, 1_000_000);
    const file = schemaCachePath(env, 'https://h.example', 'b');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8')).not.toContain(token);
    expect(readSchemaCache(env, 'https://h.example', 'b', token, 1_000_000 + 299_000)).toEqual(fields);
    expect(readSchemaCache(env, 'https://h.example', 'b', token, 1_000_000 + 300_000)).toBeUndefined();
    expect(readSchemaCache(env, 'https://other.example', 'b', token, 1_000_000)).toBeUndefined();
    expect(readSchemaCache(env, 'https://h.example', 'b', 'another-token', 1_000_000)).toBeUndefined();
  });

  it('keeps the cache apart from the config: CARDBOARD_CACHE_DIR, else $XDG_CACHE_HOME/cardboard, else ~/.cache/cardboard', () => {
    const config = join(tempDir(), 'cfg');
    const xdg = tempDir();
    expect(cacheDir({ CARDBOARD_CONFIG_DIR: config, XDG_CACHE_HOME: xdg })).toBe(join(xdg, 'cardboard'));
    expect(cacheDir({ CARDBOARD_CACHE_DIR: '/c', XDG_CACHE_HOME: xdg })).toBe('/c');
    if (process.platform !== 'win32') expect(cacheDir({})).toBe(join(homedir(), '.cache', 'cardboard'));
    const env = { CARDBOARD_CONFIG_DIR: config, XDG_CACHE_HOME: xdg };
    expect(writeSchemaCache(env, 'https://h.example', 'b', 'tok', [], 1)).toBeUndefined();
    expect(schemaCachePath(env, 'https://h.example', 'b').startsWith(join(xdg, 'cardboard') + sep)).toBe(true);
    expect(statSync(join(xdg, 'cardboard')).mode & 0o777).toBe(0o700);
    expect(existsSync(config)).toBe(false);
  });

  it('an unwritable cache is a reason returned, never a throw', () => {
    const blocker = join(tempDir(), 'file');
    writeFileSync(blocker, 'not a directory');
    const reason = writeSchemaCache({ CARDBOARD_CACHE_DIR: join(blocker, 'cache') }, 'https://h.example', 'b', 'tok-SECRET-1', [], 1);
    expect(reason).toMatch(/^Cannot write the schema cache .*: (a part of the path is not a directory \(ENOTDIR\)|a file of that name is in the way \(EEXIST\)); the schema is not cached/);
    expect(reason).not.toContain('tok-SECRET-1');
  });
});
