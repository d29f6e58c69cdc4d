// One `mirror pull` of a mirror at a time, wherever it runs: the lock each engine takes (MirrorStore.lockPull)
// and the refusal of a second pull, the same on every engine. SQLite's lock is a file beside the mirror's
// (file-lock.ts); PostgreSQL's is an advisory lock of the server's (pg/pull-lock.ts).
import type { Clock } from '../clock.js';
import { CardboardError } from '../errors.js';
import { FileLock } from '../file-lock.js';

/** The pull lock held: release() ends it (idempotent); the end of the process ends it too. */
export interface PullLock {
  release(): void;
}

/** What a pull says it does, to the pull refused. */
export const PULL_DOING = 'mirror pull';

/** The refusal of a second pull of one mirror: `who` holds the lock, `lock` says what the lock is. */
export function pullRunning(who: string, lock: string): CardboardError {
  return new CardboardError(`Another \`cardboard mirror pull\` is pulling into this mirror: ${who}.`, {
    hint: `Wait for it to end, or stop it (the next pull resumes where it stopped). The lock is ${lock}.`,
  });
}

/** The pull lock of the SQLite mirror in file `path`: the file `<path>.pull.lock`. */
export function lockPullFile(path: string, clock: Clock): Promise<PullLock> {
  return FileLock.acquire(`${path}.pull.lock`, { doing: PULL_DOING, clock, refuse: pullRunning });
}
