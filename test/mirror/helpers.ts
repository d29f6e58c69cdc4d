// A mirror in a temporary directory for the storage tests, and a look at its file with a connection of its
// own (libsql directly, as another program would open it).
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type Libsql from 'libsql';
import { onTestFinished } from 'vitest';
import { openMirror } from '../../src/mirror/open.js';
import type { MirrorBoard, MirrorStore } from '../../src/mirror/types.js';
import { tempDir } from '../helpers/cli.js';

export const BOARD: MirrorBoard = { baseUrl: 'http://127.0.0.1:9', server: 'loopback:9', id: 'board-1' };

/** An environment whose mirror is a file of its own: `<temp>/m.db`. */
export function mirrorEnv(): { CARDBOARD_MIRROR: string; CARDBOARD_CACHE_DIR: string } {
  const dir = tempDir('cardboard-mirror-');
  return { CARDBOARD_MIRROR: join(dir, 'm.db'), CARDBOARD_CACHE_DIR: join(dir, 'cache') };
}

/** A new mirror of BOARD, closed when the test ends. */
export function newMirror(env: Record<string, string> = mirrorEnv(), board = BOARD): MirrorStore {
  const store = openMirror(env, board, { create: true });
  onTestFinished(() => store.close());
  return store;
}

/** The rows of `sql` over the file at `path`, read by a connection of its own (arrays of values). */
export function rowsOf(path: string, sql: string, ...params: unknown[]): unknown[][] {
  const Database = createRequire(import.meta.url)('libsql') as typeof Libsql;
  const db = new Database(path, { timeout: 10_000 });
  try {
    return db.prepare(sql).raw(true).all(...params) as unknown[][];
  } finally {
    db.close();
  }
}
