// --match-on with --mirror: the key index from the board's mirror when the mirror is fresh (mirror/fresh.ts),
// so a re-sync reads no page; the pages as before when it is not. The mirror is opened, never created, here:
// an import does not start a mirror, it uses one that `mirror pull` or `webhook listen --mirror` keeps.
import { freshness } from '../mirror/fresh.js';
import { isNotFilled, mirrorLocation, openMirror } from '../mirror/open.js';
import type { Freshness, MirrorStore } from '../mirror/types.js';
import { serverIdentity } from './board-lock.js';
import { indexCards, type KeyIndex } from './match-index.js';

/** The board's mirror, if there is one, and whether it is fresh enough to stand for a read of the pages. */
export interface BoardMirror {
  store: MirrorStore | undefined;
  freshness: Freshness;
}

/** Open the mirror of `board` (none when it was never made) and judge it against `maxAgeMs` at `now`. */
export async function findMirror(env: Record<string, string | undefined>, board: { baseUrl: string; id: string }, maxAgeMs: number, now: number): Promise<BoardMirror> {
  const mirrorBoard = { baseUrl: board.baseUrl, server: await serverIdentity(board.baseUrl), id: board.id };
  const location = mirrorLocation(env, mirrorBoard);
  // Absent is no error here: the pages stand in for it. Whether there is one is the open's answer, on either
  // engine (no file, an empty file, a database or schema without this board's mirror). A file or a database
  // that is not this board's mirror, or a server out of reach, is an error (open).
  let store: MirrorStore;
  try {
    store = openMirror(env, mirrorBoard, { create: false });
  } catch (err) {
    if (!isNotFilled(err, location)) throw err;
    return { store: undefined, freshness: { fresh: false, reason: `no mirror at ${location} (cardboard mirror pull makes one)` } };
  }
  return { store, freshness: freshness(store.status(), maxAgeMs, now) };
}

/** The key index of the mirror's cards (the same builder as a read of the pages: ambiguous keys set apart). */
export function mirrorKeyIndex(store: MirrorStore, fresh: Freshness, field: string, fields: readonly string[]): KeyIndex {
  const from = { kind: 'mirror' as const, location: store.location, reason: fresh.reason, ...(fresh.ageMs === undefined ? {} : { ageMs: fresh.ageMs }) };
  return indexCards(store.cards(), field, fields, from);
}
