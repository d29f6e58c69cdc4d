// The files cardboard writes hold card data and (the config) tokens, so what it creates is owner-only. A path a
// user names may be a file that is not cardboard's to change: their own out.txt behind /dev/stdout, a FIFO,
// a symlink to either, another user's file, a shared directory such as /tmp. One rule decides for every
// writer (results, rejects, journal, record file, forward log, locks, schema cache, config and cache
// directories): a mode is set only on what the same call has just created (O_EXCL, mkdir). Anything that
// existed is written as it is, mode untouched: how widely the user shares their own file is their choice.
//
// This module is the only place in src/ that names a file mode. Each mode is set by two steps with one job
// each: the create mode keeps group and world out from the first byte (a umask can take bits away, never add
// them), and a chmod of the new file or directory gives back the owner bits a strict umask took (0277 would
// leave a file the next run cannot append to). The config file is the exception in form, not in rule: conf
// writes it, with PRIVATE_FILE_MODE (config/store.ts).
import { closeSync, constants, fchmodSync, fstatSync, lstatSync, mkdirSync, openSync, type Stats, statSync, writeSync } from 'node:fs';
import { errnoCode } from './fs-errors.js';
import { UsageError } from './errors.js';

/** The mode of a file cardboard creates: read and write for its owner, nothing for anyone else. */
export const PRIVATE_FILE_MODE = 0o600;
/** The mode of a directory cardboard creates: its owner only. */
const PRIVATE_DIR_MODE = 0o700;
/** The bits that let others than the owner write. */
const OTHERS_WRITE = 0o022;
/** The bits that let others than the owner do anything. */
const OTHERS_ANY = 0o077;

/**
 * Give back the owner bits of `wanted` that a umask took from what `fd` was just created as: the create
 * mode already kept everyone else out, so only the owner's bits are added, never another's.
 */
function restoreOwnerBits(fd: number, wanted: number): void {
  const mode = fstatSync(fd).mode & 0o777;
  if ((mode & wanted) !== wanted) fchmodSync(fd, mode | wanted);
}

/** A short name for what a non-regular path is, for an error message. */
function kindOf(stat: Stats): string {
  if (stat.isFIFO()) return 'a FIFO';
  if (stat.isCharacterDevice() || stat.isBlockDevice()) return 'a device';
  if (stat.isSocket()) return 'a socket';
  if (stat.isDirectory()) return 'a directory';
  return 'not a regular file';
}

/** The refusal of a path that must be a regular file (it is read back and appended), naming the flag. */
function notRegular(flag: string, path: string, stat: Stats): UsageError {
  return new UsageError(`${flag} ${path} is ${kindOf(stat)}: ${flag} must name a regular file (it is read back and appended to).`, {
    hint: `Pass ${flag} with a file path in a writable directory.`,
  });
}

/**
 * Refuse (UsageError naming `flag`, exit 2) a path that exists and is not a regular file, following
 * symlinks. For files that are re-read and appended (the journal, the record file): on a FIFO or a device
 * that makes no sense, and opening a FIFO would block. An absent path passes: it will be created.
 */
export function requireRegularFile(path: string, flag: string): void {
  let stat: Stats;
  try {
    stat = statSync(path);
  } catch {
    return;
  }
  if (!stat.isFile()) throw notRegular(flag, path, stat);
}

/** What a file is for: `flag` names it in errors; `reread`: it is read back and appended, so only a regular file will do. */
interface PrivateUse {
  flag: string;
  reread?: boolean;
}

/** The refusal of a FIFO nobody reads: opening it for writing would wait, and the run with it, for a reader. */
function noReader(flag: string, path: string): UsageError {
  return new UsageError(`${flag} ${path} is a FIFO with no reader: start its reader first.`, {
    hint: `Start the program that reads ${path} before cardboard, or pass ${flag} with a regular file.`,
  });
}

/**
 * Open `path` for writing (`w` truncates, `a` appends). A file this call creates is 0600 whatever the umask.
 * A path that exists keeps its mode, whatever it is: a regular file (the user's, through a symlink or
 * /dev/stdout too) is written with the mode it has; a FIFO, a device or a socket is written as it is, or,
 * for a `reread` use, refused with a UsageError naming the flag. A FIFO with no reader is refused at once
 * (UsageError) instead of waiting for one: the wait would block the event loop, Ctrl-C included.
 */
export function openPrivate(path: string, flags: 'w' | 'a', use: PrivateUse): number {
  // Checked before opening: opening a FIFO for writing blocks until someone reads it.
  if (use.reread) requireRegularFile(path, use.flag);
  const mode = constants.O_WRONLY | (flags === 'w' ? constants.O_TRUNC : constants.O_APPEND);
  try {
    return createPrivate(path, mode);
  } catch (err) {
    if (errnoCode(err) !== 'EEXIST') throw err;
    return openExisting(path, mode, use);
  }
}

/**
 * Create `path` for writing, owner-only (0600 whatever the umask), or throw EEXIST when anything is there
 * (a symlink too, dangling or not): a lock is taken by creating its file.
 */
export function createPrivateFile(path: string): number {
  return createPrivate(path, constants.O_WRONLY);
}

/** Create `path` with O_EXCL and `flags`, owner-only. */
function createPrivate(path: string, flags: number): number {
  const fd = openSync(path, flags | constants.O_CREAT | constants.O_EXCL, PRIVATE_FILE_MODE);
  try {
    restoreOwnerBits(fd, PRIVATE_FILE_MODE);
  } catch (err) {
    closeSync(fd);
    throw err;
  }
  return fd;
}

/**
 * Write `data` to `path` in place of what it held (openPrivate 'w': created 0600, or an existing file
 * truncated with the mode it has), then close it.
 */
export function writePrivateFile(path: string, data: string, use: PrivateUse): void {
  const fd = openPrivate(path, 'w', use);
  try {
    const bytes = Buffer.from(data);
    for (let done = 0; done < bytes.length; ) done += writeSync(fd, bytes, done, bytes.length - done);
  } finally {
    closeSync(fd);
  }
}

/**
 * Open a path that exists (or a symlink, dangling or not) with `mode`, never changing its mode. Opened
 * without blocking first, so a FIFO without a reader fails (ENXIO) instead of waiting; O_CREAT only makes
 * the target of a dangling symlink, at most 0600. A regular file keeps that descriptor (O_NONBLOCK means
 * nothing to one); a FIFO or a device is opened again in blocking mode (a FIFO with a reader opens at once),
 * so that writeSync waits for room instead of failing with EAGAIN.
 */
function openExisting(path: string, mode: number, use: PrivateUse): number {
  let fd: number;
  try {
    fd = openSync(path, mode | constants.O_CREAT | constants.O_NONBLOCK, PRIVATE_FILE_MODE);
  } catch (err) {
    if (errnoCode(err) === 'ENXIO' && isFifo(path)) throw noReader(use.flag, path);
    throw err;
  }
  let stat: Stats;
  try {
    stat = fstatSync(fd);
    if (stat.isFile()) return fd;
    if (use.reread) throw notRegular(use.flag, path, stat);
  } catch (err) {
    closeSync(fd);
    throw err;
  }
  // The reader is there now, and a writer (fd) too: the blocking open returns at once.
  try {
    const blocking = openSync(path, mode);
    const again = fstatSync(blocking);
    if (again.ino !== stat.ino || again.dev !== stat.dev) {
      closeSync(blocking);
      throw new UsageError(`${use.flag} ${path} was replaced while it was being opened.`, { hint: `Run again, or pass ${use.flag} with a regular file.` });
    }
    return blocking;
  } finally {
    closeSync(fd);
  }
}

function isFifo(path: string): boolean {
  try {
    return statSync(path).isFIFO();
  } catch {
    return false;
  }
}

/**
 * Create `dir` (and its parents) owner-only, 0700 whatever the umask. A directory that already exists is
 * left as it is: it may be one the user pointed at and shares, such as /tmp or $HOME.
 */
export function makePrivateDir(dir: string): void {
  const first = mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  if (first === undefined || process.platform === 'win32') return;
  // Every directory from `first` down was created now, 0700 less the umask: the leaf gets its owner bits back.
  const fd = openSync(dir, constants.O_RDONLY);
  try {
    restoreOwnerBits(fd, PRIVATE_DIR_MODE);
  } finally {
    closeSync(fd);
  }
}

/**
 * Why `path` is not a regular file of this user that only it can read and write (a symlink is not one):
 * what a secret cardboard wrote is read back from. Undefined when it is one; a path that is not there throws
 * (ENOENT) as lstat does.
 */
export function notPrivateFile(path: string): string | undefined {
  const stat = lstatSync(path);
  if (stat.isSymbolicLink()) return 'it is a symbolic link';
  if (!stat.isFile()) return 'it is not a regular file';
  if (process.getuid !== undefined && stat.uid !== process.getuid()) return 'it belongs to another user';
  if ((stat.mode & OTHERS_ANY) !== 0) return 'others can read or write it';
  return undefined;
}

/**
 * Whether `dir` is a directory of this user that nobody else can write into (not a symlink to one): a place
 * for locks and for code this process runs, where whoever can write chooses what is found there.
 */
export function isPrivateDir(dir: string): boolean {
  const stat = lstatSync(dir);
  if (!stat.isDirectory() || (stat.mode & OTHERS_WRITE) !== 0) return false;
  return process.getuid === undefined || stat.uid === process.getuid();
}
