// openPrivate sets a mode only on the file it creates (0600 whatever the umask); a path that exists, a symlink's
// target included, is written with the mode it has. A FIFO with a reader is written in blocking mode (a FIFO
// without one is refused: tested end to end, where a regression hangs a child that is killed, not the test run).
import { spawn } from 'node:child_process';
import { chmodSync, closeSync, existsSync, readFileSync, renameSync, statSync, symlinkSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { fileIdentity, openPrivate, tightenFile } from '../../src/private-file.js';
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

describe('tightenFile (a file a library wrote for us)', () => {
  it('takes group and world bits off a file the write created, not off one that was written in place', () => {
    const dir = tempDir();
    const kept = shared(join(dir, 'kept.json'));
    tightenFile(kept, fileIdentity(kept));
    expect(mode(kept)).toBe('644');
    const replaced = shared(join(dir, 'replaced.json'));
    const before = fileIdentity(replaced);
    // A new file renamed over the old one, as conf writes.
    const tmp = shared(join(dir, 'tmp.json'), 'new\n');
    renameSync(tmp, replaced);
    tightenFile(replaced, before);
    expect(mode(replaced)).toBe('600');
    expect(existsSync(tmp)).toBe(false);
  });
});
