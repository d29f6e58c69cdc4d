// One import per board at a time: two imports into one board (a CI retry while the first still runs, the
// same file through a symlink, another journal, stdin) would each create every card. The lock belongs to
// the board (base URL and id), in one directory per user on the machine, whatever the input.
import { createHash } from 'node:crypto';
import { lstatSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CardboardError } from '../errors.js';
import { FileLock, type LockRefusal } from '../file-lock.js';

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

const importBusy: LockRefusal = (who, path) =>
  new CardboardError(`Another import into this board is running: ${who}. Lock: ${path}`, {
    hint: 'Wait for it to finish: one import at a time per board. If that process is gone, delete the lock file and run again.',
  });

/** Take the board's import lock at `path` (boardLockPath), or throw naming the import that holds it (exit 1). */
export function lockBoard(path: string, doing: string, now = new Date()): FileLock {
  return FileLock.acquire(path, { refuse: importBusy, doing, now });
}
