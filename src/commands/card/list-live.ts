import { SeenIds } from '../../api/seen-ids.js';
import type { Api, PagesRead } from '../../api/types.js';
import type { Context } from '../../context.js';
import { NO_RETRY } from '../../http/retry.js';
import { canAnimate, createProgress, pagesText } from '../../io/progress.js';
import { groupDigits } from '../../io/text.js';
import { whereAgainstBoard, whereFilter } from '../../schema/where.js';
import type { Card } from '../../spec-types.js';
import type { CardListOptions, Listing } from './listing.js';
import { type NextPage, pageFooter, type PagesShown } from './page-footer.js';
import { resolveColumns } from './record-flags.js';

/** Rows a terminal table of `--all` holds at most: beyond, it stops and points to the streaming formats. */
export const MAX_TABLE_ROWS = 2000;

/**
 * One page; with `peek`, the next page is read at the same time to tell whether there are more (a terminal
 * table's footer). The peek never fails the listing or waits out a 429: it is then unknown. A next page made
 * only of cards of this one is a server ignoring ?page (it would never end): unknown too.
 */
function onePage(api: Api, page: number, signal: AbortSignal, peek: boolean): { pages: AsyncIterable<Card[]>; next: () => Promise<NextPage> } {
  const shown = api.listCards(page, { signal });
  // Awaited by the walk (which rethrows its error); marked handled so a failure never counts as unhandled first.
  shown.catch(() => {});
  const after: Promise<Card[] | undefined> = peek ? api.listCards(page + 1, { signal, retry: NO_RETRY }).catch(() => undefined) : Promise.resolve(undefined);
  async function* pages(): AsyncIterable<Card[]> {
    yield await shown;
  }
  return {
    pages: pages(),
    next: async () => {
      const [cards, following] = await Promise.all([shown, after]);
      if (following === undefined) return 'unknown';
      if (following.length === 0) return 'none';
      const here = new Set(cards.map((c) => c._id));
      return following.some((c) => !here.has(c._id)) ? 'more' : 'unknown';
    },
  };
}

/**
 * The listing of the service's pages: one (with its footer on a terminal); with --limit, pages from --page
 * on until the limit or an empty page; or every page (the api's page walk stops a server that repeats
 * itself). --where filters the cards as the pages come: the columns and the field names of the expressions
 * come from the schema (a request; a name not found asks a fresh schema once).
 *
 * A table on a terminal holds every row until the end (its widths depend on them all), so with --all it gets
 * at most MAX_TABLE_ROWS cards and, like a filtered walk whose output is not on the terminal, progress while
 * the pages are read. Every other format streams, uncut.
 */
export async function liveListing(ctx: Context, opts: CardListOptions, table: boolean, columnsNeeded: boolean): Promise<Listing> {
  const api = await ctx.api();
  const terms = opts.where && opts.where.length > 0 ? await whereAgainstBoard(api, opts.where) : [];
  const columns = columnsNeeded ? await resolveColumns(api, opts.fields) : [];
  const keep = whereFilter(terms);
  // Pages shift while they are read (spec 4.5: a card created or deleted moves others across a page
  // boundary), so a listing of several pages prints each card once, by `_id`: every id printed is kept in
  // memory (a 64-bit fingerprint), and the page walk asks the same set. A filtered walk prints only some of
  // the cards it reads, so the walk keeps its own set of those (a page of cards seen before must still end it).
  const printed = opts.all || opts.limit !== undefined ? new SeenIds() : undefined;
  const seen = printed && terms.length === 0 ? (card: Card) => printed.has(card._id) : undefined;
  const base = { columns, keep, printed, what: terms.length > 0 ? 'matching cards' : 'cards', close: () => {} };
  if (!opts.all && opts.limit !== undefined) {
    // The walk itself says whether the board ended: an empty page stops it before the limit is reached.
    const footer = async (shown: PagesShown) => (table ? pageFooter(shown, 'none') : undefined);
    return { ...base, pages: api.cardPages({ startPage: opts.page, signal: ctx.signal, seen }), footer };
  }
  if (!opts.all) {
    // Only a person at a terminal reads the footer: a pipe or a machine format costs no second request.
    const { pages, next } = onePage(api, opts.page, ctx.signal, table);
    return { ...base, pages, footer: async (shown: PagesShown) => (table ? pageFooter(shown, await next()) : undefined) };
  }
  const footer = async () => undefined;
  const cap = table ? MAX_TABLE_ROWS : undefined;
  // Progress only where it cannot mix with cards printed on the terminal as they come.
  const progress = canAnimate(ctx) && (table || (terms.length > 0 && !ctx.stdout.isTTY)) ? await createProgress(ctx) : undefined;
  if (!progress) return { ...base, pages: api.cardPages({ signal: ctx.signal, seen }), footer, cap };
  let read: PagesRead = { page: 0, pages: 0, cards: 0 };
  const text = (matched: number) => (terms.length > 0 ? `${pagesText(read)}, ${groupDigits(matched)} matching` : pagesText(read));
  progress.start('Reading the board…');
  const pages = api.cardPages({ signal: ctx.signal, seen, onPage: (r) => (read = r) });
  // Stopped before the table is written: the spinner's line must not mix with it.
  return { ...base, pages, footer, cap, progress: (matched) => progress.update(text(matched)), close: () => progress.stop() };
}
