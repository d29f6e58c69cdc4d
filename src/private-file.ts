// The files cardboard writes hold card data and (the config) tokens, so they are owner-only; but a path a
// user names may be something that is not ours to change: /dev/stdout, /dev/null, a FIFO, a symlink to
// one, another user's file, a shared directory such as /tmp. One rule, in mayChangeMode, decides for every
// writer (results, rejects, journal, record file, config and cache directories) whether a mode is touched.
import { closeSync, constants, fchmodSync, fstatSync, mkdirSync, openSync, type Stats, statSync } from 'node:fs';
import { errnoCode } from './fs-errors.js';
import { UsageError } from './errors.js';

/**
 * Whether cardboard may change the mode of what `stat` describes: what it has just created, or an existing
 * regular file owned by the current user. An existing regular file of ours that we are about to fill with
 * card data is tightened, because leaving a 0644 file world-readable would publish the board to every
 * user of the machine, and the file is the user's own to change. Nothing else is: a device (as root,
 * chmod of /dev/null would lock every other user out of it), a FIFO, a socket, another user's file, and
 * any directory that already existed (CARDBOARD_CONFIG_DIR=/tmp or $HOME belongs to more than cardboard,
 * and its secrets are protected by their own 0600 files).
 */
export function mayChangeMode(stat: Stats, created: boolean): boolean {
  if (created) return true;
  return stat.isFile() && stat.uid === process.getuid?.();
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
export interface PrivateUse {
  flag: string;
  reread?: boolean;
}

/**
 * Open `path` for writing (`w` truncates, `a` appends). A file it creates is 0600 whatever the umask; an
 * existing regular file of ours loses its group and world bits (mayChangeMode); anything else (a device,
 * a FIFO, /dev/stdout, a symlink to one, another user's file) is written as it is, or, for a `reread`
 * use, refused with a UsageError naming the flag. The decision is made on the opened descriptor (fstat),
 * so a path swapped between a check and the open cannot redirect a chmod.
 */
export function openPrivate(path: string, flags: 'w' | 'a', use: PrivateUse): number {
  // Checked before opening: opening a FIFO for writing blocks until someone reads it.
  if (use.reread) requireRegularFile(path, use.flag);
  let fd: number;
  let created = true;
  try {
    fd = openSync(path, flags === 'w' ? 'wx' : 'ax', 0o600);
  } catch (err) {
    if (errnoCode(err) !== 'EEXIST') throw err;
    created = false;
    fd = openSync(path, flags, 0o600);
  }
  try {
    const stat = fstatSync(fd);
    if (use.reread && !stat.isFile()) throw notRegular(use.flag, path, stat);
    if (mayChangeMode(stat, created)) {
      const mode = created ? 0o600 : stat.mode & 0o700;
      if ((stat.mode & 0o777) !== mode) fchmodSync(fd, mode);
    }
  } catch (err) {
    closeSync(fd);
    throw err;
  }
  return fd;
}

/**
 * Create `dir` (and its parents) owner-only, 0700 whatever the umask. A directory that already exists is
 * left as it is (mayChangeMode): it may be one the user pointed at and shares, such as /tmp or $HOME.
 */
export function makePrivateDir(dir: string): void {
  const first = mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (first === undefined || process.platform === 'win32') return;
  // Every directory from `first` down was created now, with 0700 less the umask: the leaf gets 0700 exactly.
  const fd = openSync(dir, constants.O_RDONLY);
  try {
    if (mayChangeMode(fstatSync(fd), true)) fchmodSync(fd, 0o700);
  } finally {
    closeSync(fd);
  }
}

/**
 * Make an existing file owner-only (its group and world bits off) when mayChangeMode allows: a file a
 * library wrote for us (the config, through conf). Opened without blocking, so a FIFO put in its place
 * cannot hang the command, and decided on the opened descriptor.
 */
export function tightenFile(path: string): void {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const stat = fstatSync(fd);
    if (mayChangeMode(stat, false) && (stat.mode & 0o077) !== 0) fchmodSync(fd, stat.mode & 0o700);
  } finally {
    closeSync(fd);
  }
}
