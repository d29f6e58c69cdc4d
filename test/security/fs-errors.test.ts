// File-system errors a user can fix end in one message naming the path and the flag or
// variable that moves the file (exit 2), never a stack trace. Root ignores permission bits, so the tests
// provoke ENOTDIR (a parent that is a regular file), EISDIR (a directory where a file goes) and EEXIST.
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.js';
import { fileError } from '../../src/fs-errors.js';
import { BIN, runMain, tempDir } from '../helpers/cli.js';
import { BOARD_ID, type RunningEmulator, startTestEmulator, TOKEN } from '../helpers/emulator.js';

const errno = (code: string, path: string) => Object.assign(new Error(`${code}: x, mkdir '${path}'`), { code, path });

describe('fileError', () => {
  it.each(['EACCES', 'EPERM', 'EISDIR', 'ENOTDIR', 'EROFS', 'ENOENT'])('turns %s into a UsageError with the path and the hint', (code) => {
    const e = fileError(errno(code, '/ro/.cardboard-journal'), { action: 'create the import lock in', path: '/ro/.cardboard-journal', hint: 'Pass --journal <path>.' });
    expect(e).toBeInstanceOf(UsageError);
    expect((e as UsageError).message).toContain(`Cannot create the import lock in /ro/.cardboard-journal: `);
    expect((e as UsageError).message).toContain(`(${code})`);
    expect((e as UsageError).hint).toBe('Pass --journal <path>.');
    expect((e as UsageError).exitCode).toBe(2);
  });

  it('names the path the system refused when it is another one, and leaves other errors alone', () => {
    const e = fileError(errno('EACCES', '/home/other'), { action: 'create the config directory', path: '/home/other/.config/cardboard', hint: 'h' });
    expect((e as UsageError).message).toContain('/home/other/.config/cardboard (at /home/other): permission denied (EACCES)');
    const other = new Error('boom');
    expect(fileError(other, { action: 'a', path: 'p', hint: 'h' })).toBe(other);
    const io = errno('EIO', '/x');
    expect(fileError(io, { action: 'a', path: 'p', hint: 'h' })).toBe(io);
  });
});

describe('the config directory', () => {
  it('under a regular file: board add fails with exit 2 naming CARDBOARD_CONFIG_DIR', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'file'), '');
    const r = await runMain(['--base-url', 'http://127.0.0.1:9', 'board', 'add', 'w', '--id', 'b', '--token-stdin', '--no-verify'], {
      configDir: join(dir, 'file', 'cardboard'),
      input: 'tok-0123456789\n',
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`Cannot use the config directory ${join(dir, 'file', 'cardboard')}: a part of the path is not a directory (ENOTDIR)`);
    expect(r.stderr).toContain('CARDBOARD_CONFIG_DIR');
    expect(r.stderr).not.toMatch(/This is a bug/);
  });

  it('with config.json a directory: every command fails with exit 2 naming CARDBOARD_CONFIG_DIR', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'config.json'));
    const r = await runMain(['board', 'list'], { configDir: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`Cannot read the config file ${join(dir, 'config.json')}: it is a directory (EISDIR)`);
    expect(r.stderr).toContain('hint: Set CARDBOARD_CONFIG_DIR');
  });
});

describe('import files', () => {
  let emu: RunningEmulator;
  beforeAll(async () => {
    emu = await startTestEmulator();
  });
  afterAll(() => emu.close());

  const env = () => ({ CARDBOARD_BASE_URL: emu.url, CARDBOARD_BOARD: BOARD_ID, CARDBOARD_TOKEN: TOKEN });
  const posts = () => emu.requests().filter((q) => q.method === 'POST').length;
  const input = () => {
    const dir = tempDir();
    const file = join(dir, 'in.csv');
    writeFileSync(file, 'Name\nfs-a\n');
    return { dir, file };
  };

  it('a journal directory that cannot be created names --journal, and nothing is sent', async () => {
    const { dir, file } = input();
    // Where .cardboard-journal would go, a file: mkdir fails as it would in a read-only directory.
    writeFileSync(join(dir, '.cardboard-journal'), '');
    const before = posts();
    const r = await runMain(['import', file], { env: env() });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`Cannot write the journal ${join(dir, '.cardboard-journal')}/in.csv.`);
    expect(r.stderr).toContain('--journal <path>');
    expect(r.stderr).not.toMatch(/This is a bug/);
    expect(posts()).toBe(before);
    // The flag the hint names works.
    const moved = await runMain(['import', file, '--journal', join(tempDir(), 'j.log')], { env: env() });
    expect(moved.code).toBe(0);
  });

  it.each(['--journal', '--results', '--rejects'])('%s naming a directory: exit 2 before anything is sent', async (flag) => {
    const { dir, file } = input();
    mkdirSync(join(dir, 'out'));
    const before = posts();
    const r = await runMain(['import', file, flag, join(dir, 'out')], { env: env() });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`error: ${flag} ${join(dir, 'out')} is a directory`);
    expect(r.stderr).toContain(`hint: Pass ${flag} with a file path`);
    expect(posts()).toBe(before);
  });

  it.each(['--journal', '--results', '--rejects'])('%s under a regular file: exit 2 naming the flag, no lock or journal left', async (flag) => {
    const { dir, file } = input();
    const before = posts();
    const r = await runMain(['import', file, flag, join(file, 'x.csv')], { env: env() });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/ENOTDIR|EEXIST/);
    expect(r.stderr).toContain(`Pass ${flag} with a`);
    expect(r.stderr).not.toMatch(/This is a bug/);
    expect(posts()).toBe(before);
    const left = existsSync(join(dir, '.cardboard-journal')) ? readdirSync(join(dir, '.cardboard-journal')) : [];
    expect(left).toEqual([]);
  });
});

/**
 * Permission bits, for real: as root (which they do not stop) the CLI runs as `nobody` through runuser;
 * as any other user it runs directly. EACCES on a config directory of another user and on the journal
 * directory next to an input in a read-only directory.
 */
/** A temp dir others may enter (mkdtemp makes it 0700). */
function openDir(): string {
  const dir = tempDir();
  chmodSync(dir, 0o755);
  return dir;
}

describe('permission denied, as an unprivileged user', () => {
  const root = process.getuid?.() === 0;
  // As root, only where `nobody` can run node and reach this checkout and the temp dir (a clone under a
  // 0700 home could not be read by it: then these tests would prove nothing and are skipped).
  const canDrop =
    !root ||
    (existsSync('/usr/sbin/runuser') &&
      spawnSync('/usr/sbin/runuser', ['-u', 'nobody', '--', process.execPath, BIN, '--version'], { stdio: 'ignore' }).status === 0 &&
      spawnSync('/usr/sbin/runuser', ['-u', 'nobody', '--', 'test', '-x', openDir()], { stdio: 'ignore' }).status === 0);
  let emu: RunningEmulator;
  beforeAll(async () => {
    emu = await startTestEmulator();
  });
  afterAll(() => emu.close());

  const run = (args: string[], env: Record<string, string>, input = ''): Promise<{ code: number | null; stderr: string }> =>
    new Promise((resolve, reject) => {
      const base = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/tmp', CI: '1', NO_COLOR: '1', ...env };
      const [cmd, argv] = root
        ? ['/usr/sbin/runuser', ['-u', 'nobody', '--', 'env', ...Object.entries(base).map(([k, v]) => `${k}=${v}`), process.execPath, BIN, ...args]]
        : [process.execPath, [BIN, ...args]];
      const child = spawn(cmd, argv as string[], { env: root ? {} : base, stdio: ['pipe', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stderr }));
      child.stdin.end(input);
    });
  /** A directory the test's user owns and the CLI's user can enter and read, but not write. */
  const readOnlyDir = () => {
    const ro = join(openDir(), 'ro');
    mkdirSync(ro, { mode: 0o755 });
    writeFileSync(join(ro, 'in.csv'), 'Name\nperm-a\n', { mode: 0o644 });
    writeFileSync(join(ro, 'config.json'), '{"boards":{}}', { mode: 0o600 });
    chmodSync(ro, 0o555);
    return ro;
  };
  const board = () => ({ CARDBOARD_BASE_URL: emu.url, CARDBOARD_BOARD: BOARD_ID, CARDBOARD_TOKEN: TOKEN, CARDBOARD_CONFIG_DIR: '/nonexistent/cardboard' });

  it.runIf(canDrop)('an input in a read-only directory: EACCES naming --journal, exit 2, nothing sent', async () => {
    const ro = readOnlyDir();
    const before = emu.requests().filter((q) => q.method === 'POST').length;
    const r = await run(['import', join(ro, 'in.csv')], board());
    expect(r.stderr).toContain(`Cannot write the journal ${join(ro, '.cardboard-journal')}/`);
    expect(r.stderr).toContain('permission denied (EACCES)');
    expect(r.stderr).toContain('--journal <path>');
    expect(r.code).toBe(2);
    expect(emu.requests().filter((q) => q.method === 'POST').length).toBe(before);
  });

  it.runIf(canDrop)('a config directory the user may not write: exit 2 naming CARDBOARD_CONFIG_DIR', async () => {
    const ro = readOnlyDir();
    const read = await run(['board', 'list'], { CARDBOARD_CONFIG_DIR: ro });
    expect(read.code).toBe(2);
    expect(read.stderr).toContain(`Cannot read the config file ${join(ro, 'config.json')}: permission denied (EACCES)`);
    expect(read.stderr).toContain('hint: Set CARDBOARD_CONFIG_DIR');
    const cfg = join(ro, 'sub');
    const write = await run(['--base-url', emu.url, 'board', 'add', 'w', '--id', BOARD_ID, '--token-stdin', '--no-verify'], { CARDBOARD_CONFIG_DIR: cfg }, `${TOKEN}\n`);
    expect(write.code).toBe(2);
    expect(write.stderr).toContain(`Cannot use the config directory ${cfg}`);
    expect(write.stderr).toContain('(EACCES)');
    expect(write.stderr).toContain('hint: Set CARDBOARD_CONFIG_DIR');
  });
});
