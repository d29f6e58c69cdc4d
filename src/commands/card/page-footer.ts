import { plural } from '../../io/text.js';

/** What the page after the ones shown holds: cards (so there are more pages), none (the last), or unknown. */
export type NextPage = 'more' | 'none' | 'unknown';

/** What a listing from `--page` showed, for the line after a terminal table. */
export interface PagesShown {
  /** The page asked for (`--page`, zero-based as spec 4.5 counts them). */
  first: number;
  /** Pages read that held cards, from `first` on. */
  read: number;
  /** Cards shown in all. */
  shown: number;
  /** Cards shown of the last page read, and how many it held. */
  shownOfLast: number;
  lastLength: number;
  limit?: number;
}

/**
 * The line after a terminal table of cards from `--page`: where the board goes on. Pages are named as the
 * user types them for --page (zero-based), never as "page 3 of 4": spec 4.5 gives no total and no page size,
 * and a count beside a zero-based number reads as off by one. A page is the last only when the next one is
 * `[]`, so `next` comes from reading that page (or from the walk that reached it). Undefined when the whole
 * board from page 0 was shown. For a listing with cards (no cards is said on stderr instead).
 */
export function pageFooter(shown: PagesShown, next: NextPage): string | undefined {
  const last = shown.first + Math.max(shown.read, 1) - 1;
  if (shown.limit !== undefined && shown.shown >= shown.limit) {
    if (shown.shownOfLast < shown.lastLength) return `--limit ${shown.limit} reached part way through page ${last}; a higher --limit shows the rest`;
    return `--limit ${shown.limit} reached at the end of page ${last}; there may be more: --page ${last + 1}, or a higher --limit`;
  }
  if (next === 'none') return shown.first > 0 ? `page ${last} is the last page` : undefined;
  if (next === 'more') return `more on page ${last + 1}: --page ${last + 1}, or --all for every page`;
  return `there may be more on page ${last + 1}: --page ${last + 1}, or --all for every page`;
}

/**
 * The note after a listing of several pages that met a card twice (spec 4.5: pages shift while cards are
 * created or deleted): each card was printed once, and one moved past the reader may have been missed.
 */
export function shiftedPagesNote(repeated: number): string {
  return `note: pages shifted while they were read: ${plural(repeated, 'card')} seen twice ${repeated === 1 ? 'was' : 'were'} printed once; run again for a consistent listing`;
}
