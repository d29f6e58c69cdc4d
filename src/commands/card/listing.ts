// What `card list` is asked for, and a listing: where its cards come from (the service's pages or the
// mirror) and what the printer does with them.
import type { SeenIds } from '../../api/seen-ids.js';
import type { Format } from '../../io/records.js';
import type { Card } from '../../spec-types.js';
import type { PagesShown } from './page-footer.js';

/** What `card list` fetches and how it prints it. */
export interface CardListOptions {
  /** One zero-based page (spec 4.5); ignored with `all`. */
  page: number;
  all: boolean;
  /** Undefined: table on a TTY, ndjson piped. */
  format?: Format;
  fields?: string[];
  /** Stop after this many cards (matching ones, with `where`): without `all`, pages are read from `page` on until there are this many. */
  limit?: number;
  /** `--where` expressions, all of which a card must pass (src/schema/where.ts). */
  where?: string[];
  /** Answer from the board's mirror: no request to the service. */
  mirror?: boolean;
}

/** Where the cards of a listing come from (the service's pages, or the mirror) and what to do with them. */
export interface Listing {
  columns: string[];
  /** The --where filter. */
  keep: (card: Card) => boolean;
  pages: AsyncIterable<Card[]>;
  /** Ids printed, for a walk of several pages (a card on two pages is printed once). */
  printed?: SeenIds;
  /** What the listing holds, for "no cards": `cards`, `matching cards`. */
  what: string;
  /** The footer line of a terminal table, from what the walk showed. */
  footer: (shown: PagesShown) => Promise<string | undefined>;
  /** Rows a terminal table holds at most (MAX_TABLE_ROWS), if it is one. */
  cap?: number;
  /** Heard after each page, with the cards printed so far (progress). */
  progress?: (shown: number) => void;
  /** Called once the cards are read, before the table is written, and on failure (a spinner, a database). */
  close: () => void;
}
