// Where a board's mirror lives, and opening it: for writing (a pull, a listener, an import), or read-only (a
// query). The storage is reached only through these and the interfaces of types.ts.
import { createHash } from 'node:crypto';
import { closeSync, existsSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { cacheDir } from '../config/dirs.js';
import { UsageError } from '../errors.js';
import { errnoCode, fileError } from '../fs-errors.js';
import { createPrivateFile, makePrivateDir } from '../private-file.js';
import { notFilled, SqliteMirror } from './sqlite-store.js';
import { SqliteReader } from './reader.js';
import type { MirrorBoard, MirrorReader, MirrorStore } from './types.js';

type Env = Record<string, string | undefined>;

/**
 * The mirror's file: CARDBOARD_MIRROR when set (a file path, made absolute), else one file per server and
 * board under the cache directory, named by a digest of both (as the import lock names a board). A URL is
 * refused (UsageError) naming only its scheme: it may carry a password.
 */
export function mirrorLocation(env: Env, board: MirrorBoard): string {
  const named = env.CARDBOARD_MIRROR;
  if (named !== undefined && named !== '') {
    const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(named)?.[1];
    if (scheme !== undefined) {
      const soon = /^postgres(?:ql)?$/i.test(scheme) ? ' yet' : '';
      throw new UsageError(`CARDBOARD_MIRROR=${scheme}://… is not supported${soon}: give a file path`, { hint: 'Set CARDBOARD_MIRROR to a file path such as ./board.db, or unset it to keep the mirror in the cache directory.' });
    }
    return resolve(named);
  }
  const digest = createHash('sha256').update(`${board.server}\n${board.id}`).digest('hex').slice(0, 32);
  return join(cacheDir(env), 'mirror', `board-${digest}.db`);
}

/**
 * Create the mirror's file owner-only (0600 in a 0700 directory made for it) before SQLite opens it, so
 * the -wal and -shm files SQLite makes beside it take its mode. A file that exists is left as it is.
 */
function createFile(location: string): void {
  makePrivateDir(dirname(location));
  try {
    closeSync(createPrivateFile(location));
  } catch (err) {
    if (errnoCode(err) !== 'EEXIST') throw err;
  }
}

/**
 * Open the mirror of `board` for reading and writing. With `create`, a mirror not there yet is made;
 * without, it is an error naming where it was looked for (exit 1) with the commands that fill one. A file
 * that holds another board's mirror is refused (UsageError, exit 2), nothing changed.
 */
export function openMirror(env: Env, board: MirrorBoard, options: { create: boolean }): MirrorStore {
  const location = mirrorLocation(env, board);
  findFile(location, options.create);
  return SqliteMirror.open(location, board, location, options.create);
}

/** Open the mirror of `board` read-only, for queries; absent, it is the error openMirror gives without `create`. */
export function openMirrorReader(env: Env, board: MirrorBoard): MirrorReader {
  return openReaderAt(mirrorLocation(env, board), board);
}

/** openMirrorReader for a location already found with mirrorLocation (a thread that has no environment of its own). */
export function openReaderAt(location: string, board: MirrorBoard): MirrorReader {
  findFile(location, false);
  return SqliteReader.open(location, board);
}

/**
 * Check the mirror's file before SQLite opens it: made owner-only when `create`, else there (or notFilled).
 * A directory, or a path the system refuses, is a UsageError naming it.
 */
function findFile(location: string, create: boolean): void {
  try {
    if (statSync(location, { throwIfNoEntry: false })?.isDirectory()) {
      throw new UsageError(`CARDBOARD_MIRROR ${location} is a directory: give a file path, such as ${join(location, 'board.db')}.`);
    }
    if (create) createFile(location);
    else if (!existsSync(location)) throw notFilled(location);
  } catch (err) {
    throw fileError(err, { action: 'open the mirror', path: location, hint: 'Set CARDBOARD_MIRROR to a file path in a writable directory, or unset it.' });
  }
}
