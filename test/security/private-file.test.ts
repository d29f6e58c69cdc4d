// openPrivate sets a mode only on the file it creates (0600 whatever the umask); a path that exists, a symlink's
// target included, is written with the mode it has. A FIFO with a reader is written in blocking mode (a FIFO
// without one is refused: tested end to end, where a regression hangs a child that is killed, not the test run).
// Each step that sets a mode is pinned alone: the create mode by a umask that leaves others' bits (022), the
// owner bits given back by one that takes the owner's (0277).
import { spawn } from 'node:child_process';
import { chmodSync, closeSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createPrivateFile, isPrivateDir, makePrivateDir, openPrivate, writePrivateFile } from '../../src/private-file.js';
import { tempDir } from '../helpers/cli.js';
import { holdReader, makeFifo } from '../helpers/fifo.js';

const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);
const use = { flag: '--results' };

/** Write `text` through openPrivate and close. */
function write(path: string, flags: 'w' | 'a', text: string): void {
  const fd = openPrivate(path, flags, use);
  try {
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
}

/** A regular file of ours, mode 0644 whatever the umask. */
function shared(path: string, text = 'old\n'): string {
  writeFileSync(path, text);
  chmodSync(path, 0o644);
  return path;
}

/** Run `fn` with the process umask set to `mask`. */
function withUmask<T>(mask: number, fn: () => T): T {
  const before = process.umask(mask);
  try {
    return fn();
  } finally {
    process.umask(before);
  }
}

describe('openPrivate', () => {
  it("an existing 0644 file is truncated ('w') and keeps 0644", () => {
    const path = shared(join(tempDir(), 'out.csv'));
    write(path, 'w', 'new\n');
    expect(readFileSync(path, 'utf8')).toBe('new\n');
    expect(mode(path)).toBe('644');
  });

  it("an existing 0644 file is appended to ('a') and keeps 0644", () => {
    const path = shared(join(tempDir(), 'out.jsonl'));
    write(path, 'a', 'more\n');
    expect(readFileSync(path, 'utf8')).toBe('old\nmore\n');
    expect(mode(path)).toBe('644');
  });

  it('a symlink to a 0644 file: the target is written and keeps 0644', () => {
    const dir = tempDir();
    const target = shared(join(dir, 'target.csv'));
    const link = join(dir, 'link.csv');
    symlinkSync(target, link);
    write(link, 'w', 'new\n');
    expect(readFileSync(target, 'utf8')).toBe('new\n');
    expect(mode(target)).toBe('644');
    write(link, 'a', 'more\n');
    expect(readFileSync(target, 'utf8')).toBe('new\nmore\n');
    expect(mode(target)).toBe('644');
  });

  it('a file it creates is 0600 under umask 022 and under 0277 (w and a)', () => {
    const dir = tempDir();
    for (const mask of [0o022, 0o277]) {
      for (const flags of ['w', 'a'] as const) {
        const path = join(dir, `new-${mask.toString(8)}-${flags}.csv`);
        withUmask(mask, () => write(path, flags, 'x\n'));
        expect(mode(path), `umask ${mask.toString(8)}, ${flags}`).toBe('600');
        expect(readFileSync(path, 'utf8')).toBe('x\n');
      }
    }
  });

  it('a file made through a dangling symlink is at most 0600', () => {
    const dir = tempDir();
    const link = join(dir, 'link.csv');
    symlinkSync(join(dir, 'made.csv'), link);
    withUmask(0o022, () => write(link, 'w', 'x\n'));
    expect(mode(join(dir, 'made.csv'))).toBe('600');
  });

  it('a FIFO with a reader is written in blocking mode: more than the pipe holds waits for a slow reader', async () => {
    const dir = tempDir();
    const path = makeFifo(dir, 'out.fifo');
    const got = join(dir, 'got');
    // The reader opens the FIFO, sleeps, then reads everything: a non-blocking writer would meet EAGAIN.
    const reader = spawn('sh', ['-c', 'exec 3<"$1"; sleep 1; cat <&3 >"$2"', 'sh', path, got], { stdio: 'ignore' });
    onTestFinished(() => {
      reader.kill('SIGKILL');
    });
    const ended = new Promise<number | null>((resolve) => reader.on('close', resolve));
    const holder = await holdReader(path);
    const fd = openPrivate(path, 'w', use);
    closeSync(holder);
    const data = Buffer.alloc(1024 * 1024, 'x');
    try {
      let done = 0;
      while (done < data.length) done += writeSync(fd, data, done, data.length - done);
    } finally {
      closeSync(fd);
    }
    expect(await ended).toBe(0);
    expect(statSync(got).size).toBe(data.length);
    expect(mode(path)).toBe('644');
  });
});

describe('createPrivateFile and writePrivateFile', () => {
  it('createPrivateFile makes a file 0600 under umask 022 and 0277, and refuses (EEXIST) anything in the way, a dangling symlink too', () => {
    const dir = tempDir();
    for (const mask of [0o022, 0o277]) {
      const path = join(dir, `lock-${mask.toString(8)}`);
      closeSync(withUmask(mask, () => createPrivateFile(path)));
      expect(mode(path), `umask ${mask.toString(8)}`).toBe('600');
      expect(() => createPrivateFile(path)).toThrow(expect.objectContaining({ code: 'EEXIST' }));
    }
    const link = join(dir, 'dangling');
    symlinkSync(join(dir, 'nowhere'), link);
    expect(() => createPrivateFile(link)).toThrow(expect.objectContaining({ code: 'EEXIST' }));
  });

  it('writePrivateFile creates 0600 under umask 022 and 0277, and replaces the content of a 0644 file, which stays 0644', () => {
    const dir = tempDir();
    for (const mask of [0o022, 0o277]) {
      const path = join(dir, `cache-${mask.toString(8)}.json`);
      withUmask(mask, () => writePrivateFile(path, '{"a":1}', use));
      expect([mode(path), readFileSync(path, 'utf8')]).toEqual(['600', '{"a":1}']);
    }
    const kept = shared(join(dir, 'kept.json'), 'a much longer old content\n');
    writePrivateFile(kept, 'new', use);
    expect([mode(kept), readFileSync(kept, 'utf8')]).toEqual(['644', 'new']);
  });
});

describe('makePrivateDir and isPrivateDir', () => {
  it('a directory it creates is 0700 under umask 022 and under 0277; one that exists keeps its mode', () => {
    const root = tempDir();
    for (const mask of [0o022, 0o277]) {
      const dir = join(root, `made-${mask.toString(8)}`);
      withUmask(mask, () => makePrivateDir(dir));
      expect(mode(dir), `umask ${mask.toString(8)}`).toBe('700');
    }
    const nested = join(root, 'a', 'b', 'c');
    withUmask(0o022, () => makePrivateDir(nested));
    expect(mode(nested)).toBe('700');
    const existing = join(root, 'shared');
    mkdirSync(existing);
    chmodSync(existing, 0o755);
    makePrivateDir(existing);
    expect(mode(existing)).toBe('755');
  });

  it('isPrivateDir: an own directory no one else may write to, not a symlink to one, not a file', () => {
    const root = tempDir();
    const own = join(root, 'own');
    mkdirSync(own);
    for (const [m, expected] of [[0o700, true], [0o755, true], [0o770, false], [0o702, false], [0o777, false]] as const) {
      chmodSync(own, m);
      expect([m.toString(8), isPrivateDir(own)]).toEqual([m.toString(8), expected]);
    }
    chmodSync(own, 0o700);
    const link = join(root, 'link');
    symlinkSync(own, link);
    expect(isPrivateDir(link)).toBe(false);
    expect(isPrivateDir(shared(join(root, 'file')))).toBe(false);
  });
});
