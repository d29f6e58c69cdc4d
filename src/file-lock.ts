// A lock file: one process at a time holds it (one import per board, one webhook listener per record
// file). The lock is an owner-only file created with O_EXCL (private-file.ts) that holds the owner's pid,
// host, start time and what it is doing; a lock whose pid is dead (kill -9) is taken over. Where a lock
// lives is each caller's rule.
import { closeSync, linkSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname } from 'node:path';
import { type Clock, realClock } from './clock.js';
import { CardboardError } from './errors.js';
import { createPrivateFile, makePrivateDir } from './private-file.js';

/** What a lock file says about its owner. */
interface LockOwner {
  pid: number;
  host: string;
  started: string;
  /** What the owner does, for the refusal: e.g. the input an import reads. */
  doing?: string;
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

/** The refusal of a caller that names none: the lock and its live owner (exit 1). */
const heldBy: LockRefusal = (who, path) =>
  new CardboardError(`The lock ${path} is held by ${who}.`, { hint: 'Wait for that process to finish. If it is gone, delete the lock file and run again.' });

function busy(path: string, owner: LockOwner | undefined, refuse: LockRefusal): CardboardError {
  if (!owner) return refuse('another process', path);
  return refuse(`process ${owner.pid} on ${owner.host}${owner.doing ? `, ${owner.doing}` : ''} (since ${owner.started})`, path);
}

/** How a lock is taken: the refusal when a live process holds it, and what the owner says it does. */
interface LockRequest {
  /** The error for a held lock (default: a CardboardError naming the lock and its owner, exit 1). */
  refuse?: LockRefusal;
  /** What this process does, shown to the next one refused. */
  doing?: string;
  /** The lock's start time, and the wait for a lock being written (default: the real clock). */
  clock?: Clock;
}

/** How long to wait for a lock being written before looking again, and how many looks in all. */
const UNREADABLE_WAIT_MS = 50;
const LOOKS = 5;

/**
 * The locks this process holds, and the one 'exit' hook that releases them: process.exit (a second Ctrl-C,
 * exitBySignal) runs no finally, and a lock left behind would refuse the next run until its pid is found
 * dead. Process-wide state on purpose, as the exit it answers is the process's: one hook, added with the
 * first lock held and removed with the last, never one per lock. Empty whenever no lock is held.
 */
const heldLocks = new Set<FileLock>();

function releaseAll(): void {
  for (const lock of heldLocks) lock.release();
}

/** A held lock; release() is idempotent and also runs on process exit (a second Ctrl-C exits at once). */
export class FileLock {
  private constructor(
    readonly path: string,
    private readonly owner: LockOwner,
  ) {
    if (heldLocks.size === 0) process.on('exit', releaseAll);
    heldLocks.add(this);
  }

  /**
   * Take the lock at `path`, or reject with a CardboardError (exit 1) naming the live owner. A lock that
   * cannot be read is one being written right now (or one cut short): it is looked at again after a
   * moment, waited for on `clock` (the event loop goes on meanwhile). A stale lock is first renamed to a
   * name of our own (atomic: of two processes taking over the same stale lock, one rename finds it), then
   * re-read: if what we moved is a live lock (another process took over first), it is linked back and we
   * refuse; else it is deleted and we create ours with O_EXCL again.
   */
  static async acquire(path: string, { refuse = heldBy, doing, clock = realClock }: LockRequest = {}): Promise<FileLock> {
    makePrivateDir(dirname(path));
    const owner: LockOwner = { pid: process.pid, host: hostname(), started: new Date(clock.now()).toISOString() };
    if (doing !== undefined) owner.doing = doing;
    for (let look = 1; look <= LOOKS; look++) {
      let fd: number;
      try {
        fd = createPrivateFile(path);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        const current = readOwner(path);
        if (current === undefined && look < LOOKS) {
          await clock.sleep(UNREADABLE_WAIT_MS);
          continue;
        }
        if (current !== undefined && alive(current)) throw busy(path, current, refuse);
        takeOver(path, refuse);
        continue;
      }
      try {
        writeSync(fd, JSON.stringify(owner));
      } finally {
        closeSync(fd);
      }
      return new FileLock(path, owner);
    }
    throw busy(path, readOwner(path), refuse);
  }

  /** Delete the lock if it is still ours. */
  release(): void {
    if (!heldLocks.delete(this)) return;
    if (heldLocks.size === 0) process.off('exit', releaseAll);
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
