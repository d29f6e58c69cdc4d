// One import per board at a time: two imports into one board (a CI retry while the first still runs, the
// same file through a symlink, another journal, stdin, another environment) would each create every card.
// The lock belongs to the board, named as the server knows it (its host resolved, its port, its path and
// the board id) whatever the URL's spelling, in one directory per user that no environment variable moves.
import { createHash } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { CardboardError } from '../errors.js';
import { FileLock, type LockRefusal } from '../file-lock.js';
import { isPrivateDir, makePrivateDir } from '../private-file.js';
import type { Clock } from '../clock.js';

/** How long the host's lookup may take before the host is named as spelled. */
const LOOKUP_MS = 2000;

/** Whether `address` (an IP literal) is a loopback address: 127.0.0.0/8, ::1, or IPv4 mapped into IPv6. */
function isLoopbackAddress(address: string): boolean {
  const a = address.toLowerCase().replace(/^::ffff:/, '');
  return (isIP(a) === 4 && a.startsWith('127.')) || a === '::1';
}

/**
 * The host as the server is reached: every spelling of this machine (`localhost`, `127.0.0.1`, `[::1]`, a
 * name that resolves only to loopback) is `loopback`; an IP literal in its normal form (the URL parser
 * already writes `0x7f.1` as `127.0.0.1`); any other name lower case, without a final dot. A name is not
 * replaced by its addresses: a service behind several, changing addresses would name another server on
 * every lookup, and the lock would move with it.
 */
async function hostIdentity(hostname: string): Promise<string> {
  const host = hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '').toLowerCase();
  if (isIP(host) !== 0) return isLoopbackAddress(host) ? 'loopback' : host;
  if (host === 'localhost' || host.endsWith('.localhost')) return 'loopback';
  try {
    const addresses = await Promise.race([
      lookup(host, { all: true }),
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error('lookup timed out')), LOOKUP_MS).unref()),
    ]);
    if (addresses.length > 0 && addresses.every((a) => isLoopbackAddress(a.address))) return 'loopback';
  } catch {
    // Not resolvable now: the request itself will say so; the name stands for the server.
  }
  return host;
}

/**
 * What names the server of `baseUrl`, whatever its spelling: the host (hostIdentity), the port (the
 * scheme's default written out) and the path the API is mounted at. The scheme is left out: one port
 * speaks one of them.
 */
export async function serverIdentity(baseUrl: string): Promise<string> {
  const url = new URL(baseUrl);
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  const path = url.pathname.replace(/\/+$/, '');
  return `${await hostIdentity(url.hostname)}:${port}${path}`;
}

/**
 * The user's home as the password database has it: `$HOME` is an environment variable, and two runs of
 * one user with another HOME must still meet. Undefined when the user has no entry (a container's
 * arbitrary uid).
 */
function passwordHome(): string | undefined {
  try {
    const home = userInfo().homedir;
    return home === '' ? undefined : home;
  } catch {
    return undefined;
  }
}

/** Errors that mean a directory cannot be made there by this user (a home that is not writable, or absent). */
const CANNOT_MAKE = new Set(['EACCES', 'EPERM', 'EROFS', 'ENOENT', 'ENOTDIR']);

/**
 * The directory of this user's import locks: `~/.cache/cardboard/locks` under the home of the password
 * database (not `$HOME`, not `XDG_CACHE_HOME`, not `TMPDIR`: each of them may differ between two runs of
 * one user). A user without such a home, or whose home cannot hold it (a system user's `/nonexistent`,
 * a read-only home), uses `/tmp/cardboard-<uid>-locks` (the fixed path, not `$TMPDIR`): the same for
 * every run of that user. A directory is used only when it is a real directory of ours that nobody else
 * can write: else another user could hold or swap our locks.
 */
function lockDirectory(): string {
  const uid = process.getuid?.() ?? 0;
  const home = passwordHome();
  const shared = join(process.platform === 'win32' ? tmpdir() : '/tmp', `cardboard-${uid}-locks`);
  const candidates = home !== undefined ? [join(home, '.cache', 'cardboard', 'locks'), shared] : [shared];
  for (const [i, dir] of candidates.entries()) {
    try {
      makePrivateDir(dir);
    } catch (err) {
      if (i < candidates.length - 1 && CANNOT_MAKE.has((err as NodeJS.ErrnoException).code ?? '')) continue;
      throw err;
    }
    if (!isPrivateDir(dir)) {
      throw new CardboardError(`The lock directory ${dir} is not a private directory of this user; no import was started.`, {
        hint: 'Make it a directory of your own that only you can write (chmod go-w), or remove it, then run again.',
      });
    }
    return dir;
  }
  throw new Error('unreachable: the last candidate returns or throws');
}

/** The import lock of a board: `<lock directory>/import-<digest of server identity and board id>.lock`. */
export function boardLockPath(server: string, board: string): string {
  const digest = createHash('sha256').update(`${server}\n${board}`).digest('hex').slice(0, 32);
  return join(lockDirectory(), `import-${digest}.lock`);
}

const importBusy: LockRefusal = (who, path) =>
  new CardboardError(`Another import into this board is running: ${who}. Lock: ${path}`, {
    hint: 'Wait for it to finish: one import at a time per board. If that process is gone, delete the lock file and run again.',
  });

/** Take the board's import lock at `path` (boardLockPath), or reject naming the import that holds it (exit 1). */
export function lockBoard(path: string, doing: string, clock?: Clock): Promise<FileLock> {
  return FileLock.acquire(path, { refuse: importBusy, doing, clock });
}
