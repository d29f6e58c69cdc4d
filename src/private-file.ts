// The files cardboard writes hold card data and (the config) tokens, so what it creates is owner-only. A path a
// user names may be a file that is not cardboard's to change: their own out.txt behind /dev/stdout, a FIFO,
// a symlink to either, another user's file, a shared directory such as /tmp. One rule decides for every
// writer (results, rejects, journal, record file, config and cache directories): a mode is set only on what
// the same call has just created (O_EXCL, mkdir). Anything that existed is written as it is, mode untouched:
// how widely the user shares their own file is their choice.
import { closeSync, constants, fchmodSync, fstatSync, mkdirSync, openSync, type Stats, statSync } from 'node:fs';
import { errnoCode } from './fs-errors.js';
import { UsageError } from './errors.js';

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
export interface PrivateUse {
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
  let fd: number;
  try {
    fd = openSync(path, mode | constants.O_CREAT | constants.O_EXCL, 0o600);
  } catch (err) {
    if (errnoCode(err) !== 'EEXIST') throw err;
    return openExisting(path, mode, use);
  }
  try {
    // Created now, by this call: 0600 exactly, whatever the umask took away.
    if ((fstatSync(fd).mode & 0o777) !== 0o600) fchmodSync(fd, 0o600);
  } catch (err) {
    closeSync(fd);
    throw err;
  }
  return fd;
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
    fd = openSync(path, mode | constants.O_CREAT | constants.O_NONBLOCK, 0o600);
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
  const first = mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (first === undefined || process.platform === 'win32') return;
  // Every directory from `first` down was created now, with 0700 less the umask: the leaf gets 0700 exactly.
  const fd = openSync(dir, constants.O_RDONLY);
  try {
    if ((fstatSync(fd).mode & 0o777) !== 0o700) fchmodSync(fd, 0o700);
  } finally {
    closeSync(fd);
  }
}

/** Where a file was, to tell afterwards whether a library's write replaced it with a file of its own. */
export interface FileIdentity {
  dev: number;
  ino: number;
}

/** The identity of what `path` names (following symlinks), or undefined when nothing is there. */
export function fileIdentity(path: string): FileIdentity | undefined {
  try {
    const { dev, ino } = statSync(path);
    return { dev, ino };
  } catch {
    return undefined;
  }
}

/**
 * Take the group and world bits off a file a library has just written for us (the config, through conf),
 * only when that write created it: a file other than `before` (conf writes a temporary file and renames it
 * over the old one). A file written in place (`before` is the same file) keeps its mode. Opened without
 * blocking, so a FIFO put in its place cannot hang the command, and decided on the opened descriptor.
 */
export function tightenFile(path: string, before: FileIdentity | undefined): void {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const stat = fstatSync(fd);
    const created = before === undefined || before.dev !== stat.dev || before.ino !== stat.ino;
    if (created && stat.isFile() && stat.uid === process.getuid?.() && (stat.mode & 0o077) !== 0) fchmodSync(fd, stat.mode & 0o700);
  } finally {
    closeSync(fd);
  }
}
