// Files cardboard did not create are never chmod-ed: --results/--rejects on a FIFO, a symlink to one,
// /dev/null or an existing regular file are written with the mode they have; --journal and --record (read
// back and appended) refuse a FIFO; an existing directory named by CARDBOARD_CONFIG_DIR keeps its mode.
// Files cardboard creates are 0600, directories it creates 0700.
import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runMain, tempDir } from '../helpers/cli.js';
import { fifoWithReader } from '../helpers/fifo.js';
import { BOARD_ID, type RunningEmulator, startTestEmulator, TOKEN } from '../helpers/emulator.js';

let emu: RunningEmulator;
beforeAll(async () => {
  emu = await startTestEmulator();
});
afterAll(async () => {
  await emu.close();
});

const env = () => ({ CARDBOARD_BASE_URL: emu.url, CARDBOARD_BOARD: BOARD_ID, CARDBOARD_TOKEN: TOKEN });
const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);

function input(dir: string): string {
  const path = join(dir, 'in.csv');
  writeFileSync(path, 'Name,Status\nfile-mode-a,Open\nfile-mode-b,Open\n');
  return path;
}

describe('--results and --rejects that are not regular files of ours', () => {
  it('a FIFO is written and keeps its mode (0644)', async () => {
    const dir = tempDir();
    const results = await fifoWithReader(dir);
    try {
      const r = await runMain(['import', input(dir), '--results', results.path], { env: env(), cwd: dir });
      expect(r.code, r.stderr).toBe(0);
      expect(await results.text()).toMatch(/^line,state,_id,message,settled\r\n/);
      expect(mode(results.path)).toBe('644');
    } finally {
      results.release();
    }
  });

  it('a symlink to a FIFO (--rejects) is written through and the FIFO keeps its mode', async () => {
    const dir = tempDir();
    const target = await fifoWithReader(dir);
    const link = join(dir, 'rejects.csv');
    symlinkSync(target.path, link);
    try {
      const r = await runMain(['import', input(dir), '--rejects', link], { env: env(), cwd: dir });
      expect(r.code, r.stderr).toBe(0);
      expect(await target.text()).toBe('Name,Status,_cardboard_reason\r\n');
      expect(mode(target.path)).toBe('644');
    } finally {
      target.release();
    }
  });

  it('/dev/null is written and keeps its mode', async () => {
    const before = mode('/dev/null');
    const dir = tempDir();
    const r = await runMain(['import', input(dir), '--results', '/dev/null'], { env: env(), cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    expect(mode('/dev/null')).toBe(before);
    expect(before).toBe('666');
  });

  it.skipIf(process.getuid?.() !== 0)('a regular file of another user is written and keeps its mode (as root)', async () => {
    const dir = tempDir();
    const results = join(dir, 'theirs.csv');
    writeFileSync(results, 'old\n', { mode: 0o644 });
    chownSync(results, 65534, 65534);
    const r = await runMain(['import', input(dir), '--results', results], { env: env(), cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(results, 'utf8')).toMatch(/^line,state/);
    expect(mode(results)).toBe('644');
  });

  it('a new file is created 0600; an existing regular file of ours (0644) is written and keeps 0644', async () => {
    const dir = tempDir();
    const results = join(dir, 'results.csv');
    const rejects = join(dir, 'rejects.csv');
    writeFileSync(rejects, 'old\n', { mode: 0o644 });
    const r = await runMain(['import', input(dir), '--results', results, '--rejects', rejects], { env: env(), cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    expect([mode(results), mode(rejects)]).toEqual(['600', '644']);
    expect(readFileSync(rejects, 'utf8')).toBe('Name,Status,_cardboard_reason\r\n');
  });
});

describe('--journal and --record must be regular files (read back and appended)', () => {
  it('--journal on a FIFO: exit 2 naming --journal, nothing sent, no lock beside it, mode kept', async () => {
    const dir = tempDir();
    const journal = await fifoWithReader(dir, 'j.fifo');
    const posts = emu.requests().filter((q) => q.method === 'POST').length;
    try {
      const r = await runMain(['import', input(dir), '--journal', journal.path], { env: env(), cwd: dir });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`--journal ${journal.path} is a FIFO`);
      expect(mode(journal.path)).toBe('644');
      expect(readdirSync(dir).filter((f) => f.endsWith('.lock'))).toEqual([]);
      expect(emu.requests().filter((q) => q.method === 'POST')).toHaveLength(posts);
    } finally {
      journal.release();
    }
  });

  it('--record on a FIFO: exit 2 naming --record, no lock beside it, mode kept', async () => {
    const dir = tempDir();
    const record = await fifoWithReader(dir, 'r.fifo');
    try {
      const r = await runMain(['webhook', 'listen', '--port', '0', '--no-verify', '--record', record.path], { env: env(), cwd: dir });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`--record ${record.path} is a FIFO`);
      expect(mode(record.path)).toBe('644');
      expect(existsSync(`${record.path}.lock`)).toBe(false);
    } finally {
      record.release();
    }
  });
});

describe('the config and cache directories', () => {
  it('an existing directory named by CARDBOARD_CONFIG_DIR / CARDBOARD_CACHE_DIR keeps its mode; the config file is 0600', async () => {
    const shared = tempDir();
    chmodSync(shared, 0o755);
    const cache = join(tempDir(), 'cache');
    mkdirSync(cache, { mode: 0o755 });
    chmodSync(cache, 0o755);
    const r = await runMain(['board', 'add', 'work', '--url', `${emu.url}/api/aptlet/${BOARD_ID}`, '--token-stdin'], {
      configDir: shared,
      input: `${TOKEN}\n`,
      env: { CARDBOARD_CACHE_DIR: cache },
    });
    expect(r.code, r.stderr).toBe(0);
    expect(mode(shared)).toBe('755');
    expect(mode(cache)).toBe('755');
    expect(mode(join(shared, 'config.json'))).toBe('600');
  });

  it('a directory it creates is 0700', async () => {
    const configDir = join(tempDir(), 'new', 'cfg');
    const r = await runMain(['board', 'add', 'work', '--url', `${emu.url}/api/aptlet/${BOARD_ID}`, '--token-stdin'], { configDir, input: `${TOKEN}\n` });
    expect(r.code, r.stderr).toBe(0);
    expect(mode(configDir)).toBe('700');
  });
});
