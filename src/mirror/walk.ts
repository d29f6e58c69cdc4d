// The pages of one pull, from where its cursor stands to the first empty page (spec 4.5), with the guard
// against a server that repeats itself written for a walk that may span processes.
//
// A page made only of cards this pull already saved (a "stale" page) is normal while cards are inserted in
// front of the reader: each insertion moves the rest one place right, so after a page's worth of them the
// next page holds cards already read. Between a kill -9 and the resume, the board may have changed a lot:
// insertions of more than a page in front make the page the resume starts at stale, and a walk that ended
// there would stop every later pull at the same page. So a stale page does not end the walk by itself.
// What does:
// - a run of stale pages holding more cards than the pull had saved when the run began. On a server that
//   answers each page once (whatever moves), the cards of a run are cards this pull saved, each at most
//   once unless inserted in front again during the run: the run cannot hold more of them than the pull saved;
// - the same page (the same cards in the same order) three times in a row: a server that answers every page
//   past some point with one page (a common way of not ending) is stopped at once, not after as many pages
//   as the pull had read. A server that answers that way legitimately would need exactly a page of cards
//   inserted in front between each read, twice in a row; and then only this walk stops: the next pull resumes.
// Only the previous page's ids are held: the memory of a walk stays flat whatever the size of the board.
import type { Api, PagesRead } from '../api/types.js';
import { CardboardError } from '../errors.js';
import type { Card } from '../spec-types.js';
import type { MirrorStore, PullCursor } from './types.js';

/** The same page this many times in a row is a server repeating itself. */
const SAME_PAGE_TIMES = 3;

export interface WalkOptions {
  signal: AbortSignal;
  maxTries: number;
  /** A page read (for progress): its number, pages and cards read by this walk so far. */
  onPage?: (read: PagesRead) => void;
}

/** The error of a walk stopped by a server repeating itself; the pull stays open. */
function repeating(api: Api, page: number, run: { pages: number; cards: number; limit: number }, same: boolean): CardboardError {
  const why = same
    ? `the same cards as the ${SAME_PAGE_TIMES - 1} pages before it`
    : `${run.pages} pages in a row with ${run.cards} cards, more than the ${run.limit} the pull had read`;
  return new CardboardError(
    `Page ${page} of board ${api.board.id} on ${api.board.baseUrl} holds only cards this pull already read (${why}); the pull stopped (the server's paging would never end).`,
    {
      hint: 'Check the service: its pages end with an empty one (spec 4.5). `cardboard mirror pull --restart` abandons this pull and reads the board again from page 0.',
    },
  );
}

/**
 * The pages of `cursor`'s pull from its `nextPage`, until the first empty page. The caller saves each page
 * before it asks for the next (the staleness of a page is asked of the store, after the page before it was saved).
 * Throws the client's errors, and `repeating` for a server that repeats itself (see the top of this file).
 */
export async function* pullPages(api: Api, store: MirrorStore, cursor: PullCursor, opts: WalkOptions): AsyncGenerator<Card[]> {
  const read: PagesRead = { page: cursor.nextPage, pages: 0, cards: 0 };
  let run: { pages: number; cards: number; limit: number } | undefined;
  let previous = '';
  let same = 1;
  for (let page = cursor.nextPage; ; page++) {
    const cards = await api.listCards(page, { signal: opts.signal, maxTries: opts.maxTries });
    if (cards.length === 0) return;
    const ids = JSON.stringify(cards.map((card) => card._id));
    same = ids === previous ? same + 1 : 1;
    previous = ids;
    if (cards.every((card) => store.pulledBy(cursor, card._id))) {
      run ??= { pages: 0, cards: 0, limit: cursor.cards };
      run.pages++;
      run.cards += cards.length;
      if (same >= SAME_PAGE_TIMES) throw repeating(api, page, run, true);
      if (run.cards > run.limit) throw repeating(api, page, run, false);
    } else run = undefined;
    read.page = page;
    read.pages++;
    read.cards += cards.length;
    opts.onPage?.({ ...read });
    yield cards;
  }
}
