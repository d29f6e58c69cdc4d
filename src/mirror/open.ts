// Where a board's mirror lives, and opening it: for writing (a pull, a listener, an import), or read-only (a
// query). The storage is reached only through these and the interfaces of types.ts: a SQLite file, or a
// PostgreSQL server when CARDBOARD_MIRROR is a postgres:// URL.
import { createHash } from 'node:crypto';
import { closeSync, existsSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { cacheDir } from '../config/dirs.js';
import { CardboardError, UsageError } from '../errors.js';
import { errnoCode, fileError } from '../fs-errors.js';
import { createPrivateFile, makePrivateDir } from '../private-file.js';
import { isPgUrl, pgTarget } from './pg/location.js';
import type { PgTarget } from './pg/protocol.js';
import { PgMirror, PgReader } from './pg/store.js';
import { notFilled, SqliteMirror } from './sqlite-store.js';
import { SqliteReader } from './reader.js';
import type { MirrorBoard, MirrorReader, MirrorStore } from './types.js';

type Env = Record<string, string | undefined>;

/**
 * Where the mirror is, as shown: a PostgreSQL URL without its password, or the file: CARDBOARD_MIRROR when
 * set (a file path, made absolute), else one file per server and board under the cache directory, named by a
 * digest of both (as the import lock names a board). Another scheme is refused (UsageError) naming only the
 * scheme: the URL may carry a password.
 */
export function mirrorLocation(env: Env, board: MirrorBoard): string {
  const place = mirrorPlace(env, board);
  return 'file' in place ? place.file : place.server.location;
}

/** Where a board's mirror is, as a thread can be given it: a file, or a server with the run's environment. */
export type MirrorPlace = { file: string } | { server: PgTarget };

/** The place of the mirror of `board` (mirrorLocation's rules). */
export function mirrorPlace(env: Env, board: MirrorBoard): MirrorPlace {
  const named = env.CARDBOARD_MIRROR;
  if (named !== undefined && named !== '') {
    if (isPgUrl(named)) return { server: pgTarget(named, env) };
    const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(named)?.[1];
    if (scheme !== undefined) {
      throw new UsageError(`CARDBOARD_MIRROR=${scheme}://… is not supported: give a file path or a postgres:// URL`, {
        hint: 'Set CARDBOARD_MIRROR to a file path such as ./board.db or to postgres://user@host/database, or unset it to keep the mirror in the cache directory.',
      });
    }
    return { file: resolve(named) };
  }
  const digest = createHash('sha256').update(`${board.server}\n${board.id}`).digest('hex').slice(0, 32);
  return { file: join(cacheDir(env), 'mirror', `board-${digest}.db`) };
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
  const place = mirrorPlace(env, board);
  if ('server' in place) return PgMirror.open(place.server, board, options.create);
  const location = place.file;
  findFile(location, options.create);
  return SqliteMirror.open(location, board, location, options.create);
}

/**
 * Whether `err` is the error of a mirror that is not there (notFilled) at `location`: told by its message, not
 * its class, as an error thrown in a mirror's thread (PostgreSQL) comes back a plain CardboardError.
 */
export function isNotFilled(err: unknown, location: string): boolean {
  return err instanceof CardboardError && err.message === notFilled(location).message;
}

/** Open the mirror of `board` read-only, for queries; absent, it is the error openMirror gives without `create`. */
export function openMirrorReader(env: Env, board: MirrorBoard): MirrorReader {
  return openReaderAt(mirrorPlace(env, board), board);
}

/** openMirrorReader for a place already found with mirrorPlace (a thread that has no environment of its own). */
export function openReaderAt(place: MirrorPlace, board: MirrorBoard): MirrorReader {
  if ('server' in place) return PgReader.open(place.server, board);
  findFile(place.file, false);
  return SqliteReader.open(place.file, board);
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
