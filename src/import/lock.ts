// One import per board at a time: two imports into one board (a CI retry while the first still runs, the
// same file through a symlink, another journal, stdin) would each create every card. The lock belongs to
// the board (base URL and id), in one directory per user on the machine, whatever the input. `webhook listen --record`
// takes the same kind of lock on its record file (two listeners wrote duplicate sequence numbers). The lock
// is a file created with O_EXCL that holds the owner's pid, host, start time and what it is doing; a lock
// whose pid is dead (kill -9) is taken over.
import { createHash } from 'node:crypto';
import { closeSync, linkSync, lstatSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { CardboardError } from '../errors.js';

/** What a lock file says about its owner. */
export interface LockOwner {
  pid: number;
  host: string;
  started: string;
  /** What the owner does, for the refusal: e.g. the input an import reads. */
  doing?: string;
}

/**
 * The import lock of a board: `<tmp>/cardboard-<uid>-locks/import-<digest of base URL and board id>.lock`.
 * One directory per user on the machine, whatever the config or cache directory a run was given (a CI
 * retry may set other variables). It lives in a shared directory, so it is used only when it is a real
 * directory of ours that nobody else can write: else another user could hold or swap our locks.
 */
export function boardLockPath(baseUrl: string, board: string): string {
  const uid = process.getuid?.() ?? 0;
  const dir = join(tmpdir(), `cardboard-${uid}-locks`);
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const st = lstatSync(dir);
  if (!st.isDirectory() || (process.getuid !== undefined && st.uid !== uid) || (st.mode & 0o022) !== 0) {
    throw new CardboardError(`The lock directory ${dir} is not a private directory of this user; no import was started.`, {
      hint: 'Remove it (or set TMPDIR to a directory of your own), then run again.',
    });
  }
  const digest = createHash('sha256').update(`${baseUrl}\n${board}`).digest('hex').slice(0, 32);
  return join(dir, `import-${digest}.lock`);
}

function readOwner(path: string): LockOwner | undefined {
  try {
    const data = JSON.parse(readFileSync(path, 'utf8')) as Partial<LockOwner>;
    if (typeof data.pid !== 'number' || typeof data.host !== 'string') return undefined;
    const owner: LockOwner = { pid: data.pid, host: data.host, started: String(data.started) };
    if (typeof data.doing === 'string') owner.doing = data.doing;
    return owner;
  } catch {
    return undefined;
  }
}

/** Whether the owner may still run: on another host, or unreadable, we cannot tell, so yes. */
function alive(owner: LockOwner | undefined): boolean {
  if (owner === undefined || owner.host !== hostname()) return owner !== undefined;
  try {
    process.kill(owner.pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The error for a lock held by `who` (a description of the live owner) at `path`. */
export type LockRefusal = (who: string, path: string) => CardboardError;

const importBusy: LockRefusal = (who, path) =>
  new CardboardError(`Another import into this board is running: ${who}. Lock: ${path}`, {
    hint: 'Wait for it to finish: one import at a time per board. If that process is gone, delete the lock file and run again.',
  });

function busy(path: string, owner: LockOwner | undefined, refuse: LockRefusal): CardboardError {
  if (!owner) return refuse('another process', path);
  return refuse(`process ${owner.pid} on ${owner.host}${owner.doing ? `, ${owner.doing}` : ''} (since ${owner.started})`, path);
}

/** A held lock; release() is idempotent and also runs on process exit (a second Ctrl-C exits at once). */
export class ImportLock {
  private held = true;
  private readonly onExit = () => this.release();

  private constructor(
    readonly path: string,
    private readonly owner: LockOwner,
  ) {
    process.on('exit', this.onExit);
  }

  /**
   * Take the lock at `path`, or throw a CardboardError (exit 1) naming the live owner. A stale lock is
   * first renamed to a name of our own (atomic: of two processes taking over the same stale lock, one
   * rename finds it), then re-read: if what we moved is a live lock (another process took over first),
   * it is linked back and we refuse; else it is deleted and we create ours with O_EXCL again.
   */
  static acquire(path: string, now = new Date(), refuse: LockRefusal = importBusy, doing?: string): ImportLock {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    const owner: LockOwner = { pid: process.pid, host: hostname(), started: now.toISOString() };
    if (doing !== undefined) owner.doing = doing;
    for (let attempt = 0; attempt < 5; attempt++) {
      let fd: number;
      try {
        fd = openSync(path, 'wx', 0o600);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        const current = readOwner(path);
        // An unreadable lock is one being written right now, or one cut short: wait a moment and look again.
        if (current === undefined && attempt < 4) {
          Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
          continue;
        }
        if (current !== undefined && alive(current)) throw busy(path, current, refuse);
        takeOver(path, refuse);
        continue;
      }
      writeSync(fd, JSON.stringify(owner));
      closeSync(fd);
      return new ImportLock(path, owner);
    }
    throw busy(path, readOwner(path), refuse);
  }

  /** Delete the lock if it is still ours. */
  release(): void {
    if (!this.held) return;
    this.held = false;
    process.off('exit', this.onExit);
    const current = readOwner(this.path);
    if (current?.pid === this.owner.pid && current.host === this.owner.host) rmSync(this.path, { force: true });
  }
}

/** Move a stale lock out of the way; put it back if what was moved turns out to be a live one. */
function takeOver(path: string, refuse: LockRefusal): void {
  const mine = `${path}.${process.pid}.stale`;
  try {
    renameSync(path, mine);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return; // another process moved it first
    throw err;
  }
  const moved = readOwner(mine);
  if (moved !== undefined && alive(moved)) {
    try {
      linkSync(mine, path);
    } catch {
      // A third process created a lock meanwhile: it holds the lock now; ours goes.
    }
    rmSync(mine, { force: true });
    throw busy(path, moved, refuse);
  }
  rmSync(mine, { force: true });
}
