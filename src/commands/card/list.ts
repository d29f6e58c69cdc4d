import type { Command } from 'commander';
import type { Context, ContextRef } from '../../context.js';
import { PartialError, UsageError } from '../../errors.js';
import { createRecordWriter, defaultFormat, type Format } from '../../io/records.js';
import { createStatus } from '../../io/status.js';
import { groupDigits } from '../../io/text.js';
import { checkWhereSyntax } from '../../schema/where.js';
import { parseInteger } from '../../units.js';
import { liveListing, MAX_TABLE_ROWS } from './list-live.js';
import type { CardListOptions, Listing } from './listing.js';
import { type PagesShown, shiftedPagesNote } from './page-footer.js';
import { leftOutNote, type RecordFlags, recordChoice, recordOptions } from './record-flags.js';

export { MAX_TABLE_ROWS } from './list-live.js';

export type { CardListOptions, Listing } from './listing.js';

const EXAMPLES = `
Columns of table and csv: _id, then the board's fields in schema order (so a csv can be fed back to
\`cardboard import\`). --fields picks and orders columns (and keys of json/ndjson); _id comes first
unless listed. --json is --format json. Pages count from 0. --limit n reads pages from --page (or 0)
on until it has n cards or a page is empty. --all streams: ndjson, csv and json are written page by
page. On a terminal the table fits its width (columns left out are named on stderr) and ends with the
next page to ask for; a page without cards prints no table, and says so on stderr.

--where keeps the cards that pass every expression given (repeat it: all must hold):
  Field=value    the value exactly, case included
  Field!=value   any other value
  Field~text     contains text, ignoring case (as grep -i)
  Field<n        a number below n (Field>n: above)
Field is a field name of the board, exactly, or _id (a name that holds =, !, ~, < or > works: the
expression splits at the first operator with a field name before it). A card's value is read as
text: numbers and true/false as JSON writes them, arrays and objects as JSON, no value as "" (so
Status= finds cards without a Status). < and > match only values that are numbers (3, -2.5, 1e3,
or such a string). --where reads every page (progress on stderr) unless --page is given; --limit
counts matching cards and reads no page after the one that reaches it.

--mirror answers from the board's mirror (\`cardboard mirror pull\`; a SQLite file, or PostgreSQL with
CARDBOARD_MIRROR=postgres://…), with no request to the service:
--where, --fields, --limit and every --format work the same; stderr says how old the mirror is
(e.g. cardboard card list --mirror --where 'Name~invoice' --format csv).

Examples:
  $ cardboard card list
  $ cardboard card list --all --format csv > cards.csv
  $ cardboard card list --where Status=Open --where 'Priority>2' --limit 100 --fields Name,Priority`;

const addWhere = (value: string, previous: string[] = []) => {
  checkWhereSyntax(value);
  return [...previous, value];
};

/** Define `card list` under `parent`; `run` is replaceable so parse tests can spy on the options. */
export function cardListCommand(parent: Command, ctx: ContextRef, run = runCardList): Command {
  const command = parent
    .command('list')
    .description('List the cards: one page, every page with --all, or those --where keeps')
    .option('--page <n>', 'zero-based page to show (default 0)', (v) => parseInteger(v, '--page', 0))
    .option('--all', 'walk every page from 0 until the service returns an empty page');
  return recordOptions(command, 'print a JSON array')
    .option('--limit <n>', 'stop after n cards, reading as many pages as it takes (and no more)', (v) => parseInteger(v, '--limit', 1))
    .option('--where <expr>', 'keep cards where Field=value, Field!=value, Field~text, Field<n or Field>n (repeatable: all must hold)', addWhere)
    .option('--mirror', "answer from the board's mirror, with no request to the service")
    .addHelpText('after', EXAMPLES)
    .action(async (flags: RecordFlags & { page?: number; all?: boolean; limit?: number; where?: string[]; mirror?: boolean }) => {
      if (flags.all && flags.page !== undefined) throw new UsageError('--page and --all cannot be used together');
      if (flags.mirror && flags.page !== undefined) {
        throw new UsageError('--page and --mirror cannot be used together', { hint: 'The mirror holds the whole board: use --limit to see fewer cards.' });
      }
      const { format, fields } = recordChoice(flags);
      // A filter over one page would hide the matches of the others: --where reads every page unless --page is given.
      const all = flags.all === true || flags.mirror === true || (flags.where !== undefined && flags.page === undefined);
      await run(ctx(), { page: flags.page ?? 0, all, format, fields, limit: flags.limit, where: flags.where, mirror: flags.mirror });
    });
}

/**
 * List the cards: one page, pages up to --limit, or every page (stopping at `[]`, spec 4.5), or the mirror;
 * filtered by --where; streamed to the writer.
 */
export async function runCardList(ctx: Context, opts: CardListOptions): Promise<void> {
  const format = opts.format ?? defaultFormat(ctx);
  const table = format === 'table' && ctx.stdout.isTTY === true;
  // json/ndjson without --fields print cards whole: no schema needed.
  const columnsNeeded = opts.fields !== undefined || format === 'table' || format === 'csv';
  const listing = opts.mirror
    ? await (await import('./list-mirror.js')).mirrorListing(ctx, opts, table, columnsNeeded)
    : await liveListing(ctx, opts, table, columnsNeeded);
  try {
    await printListing(ctx, opts, format, listing);
  } finally {
    listing.close();
  }
}

/** Write the cards of a listing that pass its filter, each once, up to --limit (and a terminal table's cap). */
async function printListing(ctx: Context, opts: CardListOptions, format: Format, listing: Listing): Promise<void> {
  const status = createStatus(ctx);
  // A reader that goes away (`| head`) stops the run in main.ts: the signal aborts the next fetch and the
  // next write rejects (src/io/write.ts).
  const { columns, printed, keep } = listing;
  const writer = createRecordWriter(ctx, { format, columns, project: opts.fields !== undefined });
  const known = new Set(columns);
  const leftOut = new Set<string>();
  let repeated = 0;
  let cut = false;
  const shown: PagesShown = { first: opts.page, read: 0, shown: 0, shownOfLast: 0, lastLength: 0, limit: opts.limit };
  walk: for await (const page of listing.pages) {
    if (page.length > 0) shown.read++;
    const cards = page.filter(keep);
    shown.lastLength = cards.length;
    shown.shownOfLast = 0;
    for (const card of cards) {
      if (printed?.add(card._id)) {
        repeated++;
        continue;
      }
      if (listing.cap !== undefined && shown.shown >= listing.cap) {
        cut = true;
        break walk;
      }
      if (columns.length > 0 && opts.fields === undefined) for (const k of Object.keys(card)) if (!known.has(k)) leftOut.add(k);
      await writer.write(card);
      shown.shown++;
      shown.shownOfLast++;
      // Break inside the page so the iterator is closed before it fetches the next one.
      if (opts.limit !== undefined && shown.shown >= opts.limit) break walk;
    }
    listing.progress?.(shown.shown);
    await writer.flush();
  }
  // Awaited even when unused: the peek at the next page must not outlive the run.
  const line = await listing.footer(shown);
  listing.close();
  // A terminal table of no cards is not drawn (records.ts): the person is told on stderr instead.
  await writer.end(shown.shown > 0 ? line : undefined);
  if (shown.shown === 0 && format === 'table' && ctx.stdout.isTTY) status.info(opts.all ? `no ${listing.what}` : `no ${listing.what} on page ${opts.page}`);
  if (leftOut.size > 0) status.info(leftOutNote(leftOut));
  // Once, at the end: stdout held each card once; a card moved past the reader may also have been missed.
  if (repeated > 0) status.info(shiftedPagesNote(repeated));
  if (cut) throw tableCut(listing.what);
}

/** A terminal table of the whole board stopped at MAX_TABLE_ROWS: exit 3, pointing to the streaming formats. */
function tableCut(what: string): PartialError {
  const max = groupDigits(MAX_TABLE_ROWS);
  return new PartialError(`The terminal table stops at ${max} cards, and the board has more${what === 'cards' ? '' : ` ${what}`}; the first ${max} are shown.`, {
    hint: 'List every card with --format ndjson, csv or json (they stream; e.g. `cardboard card list --all --format csv > cards.csv`), or show fewer with --limit.',
  });
}
