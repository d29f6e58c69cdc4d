import type { Command } from 'commander';
import { SeenIds } from '../../api/seen-ids.js';
import type { Api, PagesRead } from '../../api/types.js';
import type { Context, ContextRef } from '../../context.js';
import { PartialError, UsageError } from '../../errors.js';
import { NO_RETRY } from '../../http/retry.js';
import { canAnimate, createProgress, pagesText } from '../../io/progress.js';
import { createRecordWriter, defaultFormat, type Format } from '../../io/records.js';
import { createStatus } from '../../io/status.js';
import type { Card } from '../../spec-types.js';
import { parseInteger } from '../../units.js';
import { groupDigits } from '../../io/text.js';
import { type NextPage, pageFooter, type PagesShown, shiftedPagesNote } from './page-footer.js';
import { leftOutNote, type RecordFlags, recordChoice, recordOptions, resolveColumns } from './record-flags.js';

/** What `card list` fetches and how it prints it. */
export interface CardListOptions {
  /** One zero-based page (spec 4.5); ignored with `all`. */
  page: number;
  all: boolean;
  /** Undefined: table on a TTY, ndjson piped. */
  format?: Format;
  fields?: string[];
  /** Stop after this many cards: without `all`, pages are read from `page` on until there are this many. */
  limit?: number;
}

const EXAMPLES = `
Columns of table and csv: _id, then the board's fields in schema order (so a csv can be fed back to
\`cardboard import\`). --fields picks and orders columns (and keys of json/ndjson); _id comes first
unless listed. --json is --format json. Pages count from 0. --limit n reads pages from --page (or 0)
on until it has n cards or a page is empty. --all streams: ndjson, csv and json are written page by
page. On a terminal the table fits its width (columns left out are named on stderr) and ends with the
next page to ask for; a page without cards prints no table, and says so on stderr.

Examples:
  $ cardboard card list
  $ cardboard card list --all --format csv > cards.csv
  $ cardboard card list --limit 100 --fields Name,Status --json`;

/** Define `card list` under `parent`; `run` is replaceable so parse tests can spy on the options. */
export function cardListCommand(parent: Command, ctx: ContextRef, run = runCardList): Command {
  const command = parent
    .command('list')
    .description('List the cards of the board: one page, or every page with --all')
    .option('--page <n>', 'zero-based page to show (default 0)', (v) => parseInteger(v, '--page', 0))
    .option('--all', 'walk every page from 0 until the service returns an empty page');
  return recordOptions(command, 'print a JSON array')
    .option('--limit <n>', 'stop after n cards, reading as many pages as it takes (and no more)', (v) => parseInteger(v, '--limit', 1))
    .addHelpText('after', EXAMPLES)
    .action(async (flags: RecordFlags & { page?: number; all?: boolean; limit?: number }) => {
      if (flags.all && flags.page !== undefined) throw new UsageError('--page and --all cannot be used together');
      const { format, fields } = recordChoice(flags);
      await run(ctx(), { page: flags.page ?? 0, all: flags.all ?? false, format, fields, limit: flags.limit });
    });
}

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

/** Fetch one page, pages up to --limit, or every page (stopping at `[]`, spec 4.5) and stream the cards to the writer. */
export async function runCardList(ctx: Context, opts: CardListOptions): Promise<void> {
  const format = opts.format ?? defaultFormat(ctx);
  const status = createStatus(ctx);
  const api = await ctx.api();
  // A reader that goes away (`| head`) stops the run in main.ts: the signal aborts the next fetch and the
  // next write rejects (src/io/write.ts).
  // json/ndjson without --fields print cards whole: no schema request needed.
  const needColumns = opts.fields !== undefined || format === 'table' || format === 'csv';
  const columns = needColumns ? await resolveColumns(api, opts.fields) : [];
  const writer = createRecordWriter(ctx, { format, columns, project: opts.fields !== undefined });
  const known = new Set(columns);
  const leftOut = new Set<string>();
  // Pages shift while they are read (spec 4.5: a card created or deleted moves others across a page
  // boundary), so a listing of several pages prints each card once, by `_id`: every id printed is kept in
  // memory (a 64-bit fingerprint, about 16 bytes a card), and the page walk asks the same set.
  const printed = opts.all || opts.limit !== undefined ? new SeenIds() : undefined;
  let repeated = 0;
  const { pages, finish, footer } = await listPages(ctx, api, format, opts, printed && ((card: Card) => printed.has(card._id)));
  const shown: PagesShown = { first: opts.page, read: 0, shown: 0, shownOfLast: 0, lastLength: 0, limit: opts.limit };
  walk: for await (const page of pages) {
    if (page.length > 0) shown.read++;
    shown.lastLength = page.length;
    shown.shownOfLast = 0;
    for (const card of page) {
      if (printed?.add(card._id)) {
        repeated++;
        continue;
      }
      if (needColumns && opts.fields === undefined) for (const k of Object.keys(card)) if (!known.has(k)) leftOut.add(k);
      await writer.write(card);
      shown.shown++;
      shown.shownOfLast++;
      // Break inside the page so the iterator is closed before it fetches the next one.
      if (opts.limit !== undefined && shown.shown >= opts.limit) break walk;
    }
    await writer.flush();
  }
  // Awaited even when unused: the peek at the next page must not outlive the run.
  const line = await footer(shown);
  // A terminal table of no cards is not drawn (records.ts): the person is told on stderr instead.
  await writer.end(shown.shown > 0 ? line : undefined);
  if (shown.shown === 0 && format === 'table' && ctx.stdout.isTTY) status.info(opts.all ? 'no cards' : `no cards on page ${opts.page}`);
  if (leftOut.size > 0) {
    status.info(leftOutNote(leftOut));
  }
  // Once, at the end: stdout held each card once; a card moved past the reader may also have been missed.
  if (repeated > 0) status.info(shiftedPagesNote(repeated));
  finish();
}

/** Rows a terminal table of `--all` holds at most: beyond, it stops and points to the streaming formats. */
export const MAX_TABLE_ROWS = 2000;

/** The pages to list, what to say after them on a terminal, and the check once the table is written. */
interface Listing {
  pages: AsyncIterable<Card[]>;
  /** The footer line of a terminal table, from what the walk showed. */
  footer: (shown: PagesShown) => Promise<string | undefined>;
  finish: () => void;
}

/**
 * The pages to list: one (with its footer on a terminal); with --limit, pages from --page on until the
 * limit or an empty page; or every page (the api's page walk stops a server that repeats itself). A table on a terminal holds every row until the end (its widths depend on them all),
 * so with --all it gets at most MAX_TABLE_ROWS cards and a spinner while they are read; `finish()`, once the
 * table is written, says whether it was cut (PartialError, exit 3). Every other format streams, uncut.
 */
async function listPages(ctx: Context, api: Api, format: Format, opts: CardListOptions, seen?: (card: Card) => boolean): Promise<Listing> {
  const table = format === 'table' && ctx.stdout.isTTY === true;
  const noFooter = async () => undefined;
  if (!opts.all && opts.limit !== undefined) {
    // The walk itself says whether the board ended: an empty page stops it before the limit is reached.
    const footer = async (shown: PagesShown) => (table ? pageFooter(shown, 'none') : undefined);
    return { pages: api.cardPages({ startPage: opts.page, signal: ctx.signal, seen }), finish: () => {}, footer };
  }
  if (!opts.all) {
    // Only a person at a terminal reads the footer: a pipe or a machine format costs no second request.
    const { pages, next } = onePage(api, opts.page, ctx.signal, table);
    const footer = async (shown: PagesShown) => (table ? pageFooter(shown, await next()) : undefined);
    return { pages, finish: () => {}, footer };
  }
  if (!table) return { pages: api.cardPages({ signal: ctx.signal, seen }), finish: () => {}, footer: noFooter };
  let cut = false;
  const progress = canAnimate(ctx) ? await createProgress(ctx) : undefined;
  async function* capped(): AsyncIterable<Card[]> {
    progress?.start('Reading the board…');
    try {
      let count = 0;
      for await (const page of api.cardPages({ signal: ctx.signal, seen, onPage: (read: PagesRead) => progress?.update(pagesText(read)) })) {
        if (count + page.length > MAX_TABLE_ROWS) {
          cut = true;
          if (count < MAX_TABLE_ROWS) yield page.slice(0, MAX_TABLE_ROWS - count);
          return;
        }
        count += page.length;
        yield page;
      }
    } finally {
      // Before the table is written: the spinner's line must not mix with it.
      progress?.stop();
    }
  }
  return {
    pages: capped(),
    footer: noFooter,
    finish: () => {
      if (!cut) return;
      const max = groupDigits(MAX_TABLE_ROWS);
      throw new PartialError(`The terminal table stops at ${max} cards, and the board has more; the first ${max} are shown.`, {
        hint: 'List every card with --format ndjson, csv or json (they stream; e.g. `cardboard card list --all --format csv > cards.csv`), or show fewer with --limit.',
      });
    },
  };
}
