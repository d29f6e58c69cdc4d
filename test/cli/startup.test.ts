import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import module from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { BIN, childEnv, runCli, tempDir } from '../helpers/cli.js';

const HOOK = fileURLToPath(new URL('./loaded-modules-hook.mjs', import.meta.url));
/** Node >= 22.8 has the compile cache; on Node 20 there is none to turn on. */
const HAS_COMPILE_CACHE = typeof (module as { enableCompileCache?: unknown }).enableCompileCache === 'function';

/** The modules `cardboard ...args` resolves as ES modules, as paths relative to the repository (or package names). */
async function loadedModules(args: string[]): Promise<string[]> {
  const out = join(tempDir(), 'loaded.txt');
  writeFileSync(out, '');
  const child = spawn(process.execPath, ['--import', HOOK, BIN, ...args], { env: { ...childEnv(), LOADED_MODULES_OUT: out }, stdio: 'ignore' });
  const [code] = (await once(child, 'exit')) as [number | null];
  expect(code).toBe(0);
  const root = new URL('../../', import.meta.url).href;
  return readFileSync(out, 'utf8')
    .split('\n')
    .filter((url) => url.startsWith('file:'))
    .map((url) => (url.includes('/node_modules/') ? url.replace(/.*\/node_modules\//, 'node_modules/') : url.replace(root, '')));
}

describe('start-up', () => {
  it('--help loads the program and its help, not the run context, a command group, the HTTP client, the reporter or its escaping', async () => {
    const loaded = await loadedModules(['--help']);
    expect(loaded).toContain('dist/main.js');
    expect(loaded).toContain('dist/program.js');
    for (const unneeded of ['dist/context.js', 'dist/config/store.js', 'dist/redact.js', 'dist/tuning.js', 'dist/io/text.js', 'dist/io/width.js']) {
      expect(loaded).not.toContain(unneeded);
    }
    expect(loaded.filter((m) => m.startsWith('dist/commands/') && m !== 'dist/commands/nouns.js')).toEqual([]);
    expect(loaded.filter((m) => /^dist\/(api|http|import|webhook|schema)\//.test(m))).toEqual([]);
    // commander is required (CommonJS), not imported through its ES wrapper; no other package is loaded.
    expect(loaded.filter((m) => m.startsWith('node_modules/'))).toEqual([]);
  });

  it('a command loads its group and the run context when it runs', async () => {
    const loaded = await loadedModules(['completion', 'bash']);
    expect(loaded).toContain('dist/commands/completion/index.js');
    expect(loaded).toContain('dist/context.js');
  });
});

describe('the compile cache', () => {
  it(`is kept owner-only under the cache dir (${HAS_COMPILE_CACHE ? 'on' : 'none on'} Node ${process.versions.node}), and help is the same with it`, async () => {
    const env = { XDG_CACHE_HOME: tempDir() };
    const first = await runCli(['--help'], { env });
    const dir = join(env.XDG_CACHE_HOME, 'cardboard', 'compile-cache');
    if (!HAS_COMPILE_CACHE) {
      expect(existsSync(dir)).toBe(false);
      return;
    }
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(join(env.XDG_CACHE_HOME, 'cardboard')).mode & 0o777).toBe(0o700);
    const [versionDir] = readdirSync(dir);
    expect(versionDir).toMatch(/^v\d+\.\d+\.\d+-/);
    expect(readdirSync(join(dir, versionDir!)).length).toBeGreaterThan(3);
    const second = await runCli(['--help'], { env });
    expect([second.code, second.stderr, second.stdout]).toEqual([0, '', first.stdout]);
  });

  it('a cache dir that cannot be made is no error: help as usual, nothing on stderr', async () => {
    const blocker = join(tempDir(), 'a-file');
    writeFileSync(blocker, '');
    const usual = await runCli(['--help']);
    const r = await runCli(['--help'], { env: { CARDBOARD_CACHE_DIR: join(blocker, 'cache') } });
    expect([r.code, r.stderr, r.stdout]).toEqual([0, '', usual.stdout]);
  });

  it('a compile-cache dir that others may write into is not used', async () => {
    const cache = tempDir();
    const shared = join(cache, 'compile-cache');
    mkdirSync(shared);
    chmodSync(shared, 0o777);
    const r = await runCli(['--help'], { env: { CARDBOARD_CACHE_DIR: cache } });
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(readdirSync(shared)).toEqual([]);
  });
});
