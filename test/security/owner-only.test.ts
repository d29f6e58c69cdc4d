// Owner-only files have one module, src/private-file.ts: the only place in src/ that names or changes a file
// mode, and the one every writer creates its files and directories through. Each writer is checked under a
// umask that leaves group and world bits (022: the create mode must keep them out) and one that takes the
// owner's (0277: the owner bits must be given back), so removing either step alone fails here.
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { realClock } from '../../src/clock.js';
import { configPath, configStore } from '../../src/config/store.js';
import { schemaCachePath, writeSchemaCache } from '../../src/config/schema-cache.js';
import { type Prompter, previewAndSave } from '../../src/commands/import/interactive.js';
import { FileLock } from '../../src/file-lock.js';
import { defaultJournalPath, Journal } from '../../src/import/journal.js';
import type { ColumnMapping } from '../../src/import/types.js';
import { mirrorLocation, openMirror } from '../../src/mirror/open.js';
import { durationOf } from '../../src/units.js';
import { cursorPath, Forwarder } from '../../src/webhook/forwarder.js';
import { RecordFile } from '../../src/webhook/record-file.js';
import { tempDir } from '../helpers/cli.js';
import { testContext } from '../io/buffers.js';

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));
const MODULE = 'private-file.ts';
const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);
const MASKS = [['022', 0o022], ['0277', 0o277]] as const;

/** Every source file under src/, as [path relative to src/, its text]. */
function sources(dir = SRC): [string, string][] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e): [string, string][] => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sources(path);
    return /\.(ts|js|mjs)$/.test(e.name) ? [[relative(SRC, path), readFileSync(path, 'utf8')]] : [];
  });
}

/** The lines of src/ outside private-file.ts that match one of `patterns`, as "file:line: text". */
function linesMatching(patterns: RegExp[], allowed: (file: string, line: string) => boolean = () => false): string[] {
  const found: string[] = [];
  for (const [file, text] of sources()) {
    if (file === MODULE) continue;
    text.split('\n').forEach((line, i) => {
      if (patterns.some((p) => p.test(line)) && !allowed(file, line)) found.push(`${file}:${i + 1}: ${line.trim()}`);
    });
  }
  return found;
}

/** Run `fn` with the process umask set to `mask`. */
async function withUmask<T>(mask: number, fn: () => T | Promise<T>): Promise<T> {
  const before = process.umask(mask);
  try {
    return await fn();
  } finally {
    process.umask(before);
  }
}

describe('one module for file modes', () => {
  it('no file mode is named or changed in src/ outside private-file.ts (the config passes its constant to conf)', () => {
    const modes = [
      /\b0o[0-7]{3,4}\b/, // an octal mode or mask
      /\bmode\s*:\s*\d/, // { mode: 384 }
      /\b(?:open|writeFile|appendFile|mkdir)Sync\([^)]*,\s*\d/, // a mode passed by position, in any base
      /\bS_I[RWX](?:USR|GRP|OTH)\b/, // fs.constants' mode bits
      /\b[fl]?chmod(?:Sync)?\s*\(/, // a mode changed
      /\bumask\s*\(/,
      /\.mode\s*&/, // a mode's bits tested
      /\b\w*[Mm]ode\s*:\s*[A-Z_]*MODE\b/, // a mode constant handed to a library
    ];
    const confGetsTheModule = (file: string, line: string) => file === join('config', 'store.ts') && line.trim() === 'configFileMode: PRIVATE_FILE_MODE,';
    expect(linesMatching(modes, confGetsTheModule)).toEqual([]);
  });

  it('files and directories of its own are created only through private-file.ts', () => {
    const creates = [/\b(?:writeFile|appendFile|mkdir|mkdtemp|copyFile)(?:Sync)?\s*\(/, /\bcreateWriteStream\s*\(/, /\bopenSync\([^)]*['"][wa]/];
    expect(linesMatching(creates)).toEqual([]);
  });

  it('the schema cache file is read and written only by config/schema-cache.ts', () => {
    const outside = linesMatching([/\bschemaCachePath\s*\(/]).filter((l) => !l.startsWith(`${join('config', 'schema-cache.ts')}:`));
    expect(outside).toEqual([]);
  });
});

describe('every writer creates owner-only files and directories, whatever the umask', () => {
  it.each(MASKS)('the config file 0600 and its directory 0700 (umask %s)', async (_, mask) => {
    const env = { CARDBOARD_CONFIG_DIR: join(tempDir(), 'cfg') };
    await withUmask(mask, () => configStore(env).update((c) => void (c.boards.a = { id: 'b', baseUrl: 'https://h.example', token: 't' })));
    expect([mode(configPath(env)), mode(env.CARDBOARD_CONFIG_DIR)]).toEqual(['600', '700']);
  });

  it.each(MASKS)('a config file of the user written over is 0600 (umask %s): conf writes a new one in its place', async (_, mask) => {
    const env = { CARDBOARD_CONFIG_DIR: tempDir() };
    writeFileSync(configPath(env), '{"boards":{}}', { mode: 0o644 });
    await withUmask(mask, () => configStore(env).update((c) => void (c.boards.a = { id: 'b', baseUrl: 'https://h.example', token: 't' })));
    expect(mode(configPath(env))).toBe('600');
  });

  it.each(MASKS)('the schema cache 0600 in a 0700 directory (umask %s)', async (_, mask) => {
    const env = { CARDBOARD_CACHE_DIR: join(tempDir(), 'cache') };
    expect(await withUmask(mask, () => writeSchemaCache(env, 'https://h.example', 'b', 'tok', [{ name: 'Name', uuid: 'u' }], 1))).toBeUndefined();
    expect([mode(schemaCachePath(env, 'https://h.example', 'b')), mode(env.CARDBOARD_CACHE_DIR)]).toEqual(['600', '700']);
  });

  it.each(MASKS)('a lock file 0600 in a 0700 directory (umask %s)', async (_, mask) => {
    const dir = join(tempDir(), 'locks');
    const lock = await withUmask(mask, () => FileLock.acquire(join(dir, 'x.lock')));
    try {
      expect([mode(join(dir, 'x.lock')), mode(dir)]).toEqual(['600', '700']);
    } finally {
      lock.release();
    }
  });

  it.each(MASKS)('the journal 0600 in a 0700 journal directory beside the input (umask %s)', async (_, mask) => {
    const input = join(tempDir(), 'in.csv');
    const key = { board: 'b', server: 'h:80', baseUrl: 'http://h', input, plan: 'e'.repeat(64) };
    const path = defaultJournalPath(input, key);
    const journal = await withUmask(mask, () => Journal.open(path, key, { timeoutMs: 30_000, clock: realClock }));
    journal.close();
    expect([mode(path), mode(join(path, '..'))]).toEqual(['600', '700']);
  });

  it.each(MASKS)('a mapping saved for --map-file 0600 (umask %s); one written over keeps its mode', async (_, mask) => {
    const dir = tempDir();
    const columns: ColumnMapping[] = [{ header: 'Title', index: 0, target: { kind: 'field', field: 'Name' }, how: 'prompt' }];
    const save = (path: string) => {
      const prompter: Prompter = { select: () => Promise.reject(new Error('no select')), confirm: () => Promise.resolve(true), input: () => Promise.resolve(path) };
      return withUmask(mask, () => previewAndSave(testContext().ctx, prompter, columns, [['a title']], join(dir, 'in.csv'), false, true));
    };
    await save(join(dir, 'in.map.json'));
    expect(mode(join(dir, 'in.map.json'))).toBe('600');
    expect(JSON.parse(readFileSync(join(dir, 'in.map.json'), 'utf8'))).toEqual({ Title: 'Name' });
    writeFileSync(join(dir, 'shared.map.json'), '{}', { mode: 0o644 });
    await save(join(dir, 'shared.map.json'));
    expect(mode(join(dir, 'shared.map.json'))).toBe('644');
  });

  it.each(MASKS)('a board mirror 0600, with the -wal and -shm files SQLite makes beside it, in a 0700 directory (umask %s)', async (_, mask) => {
    const env = { CARDBOARD_CACHE_DIR: join(tempDir(), 'cache') };
    const board = { baseUrl: 'http://h.example', server: 'h.example:80', id: 'b' };
    const store = await withUmask(mask, () => {
      const opened = openMirror(env, board, { create: true });
      opened.applyDeliveries([{ kind: 'comment', receivedAt: '2030-01-01T00:00:00.000Z' }]);
      return opened;
    });
    try {
      const file = mirrorLocation(env, board);
      expect([mode(file), mode(`${file}-wal`), mode(`${file}-shm`), mode(join(file, '..'))]).toEqual(['600', '600', '600', '700']);
    } finally {
      store.close();
    }
  });

  it.each(MASKS)("the forwarder's log of forwarded deliveries 0600 (umask %s)", async (_, mask) => {
    const recordPath = join(tempDir(), 'record.jsonl');
    const record = new RecordFile(recordPath);
    const forwarder = await withUmask(mask, () => new Forwarder({ url: 'http://127.0.0.1:9/', timeout: durationOf(1000), key: undefined, record, onEvent: () => {} }));
    await forwarder.stop();
    await record.close();
    expect([mode(recordPath), mode(cursorPath(recordPath))]).toEqual(['600', '600']);
  });
});
