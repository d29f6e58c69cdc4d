import type { Command } from 'commander';
import type { Context, ContextRef } from '../../context.js';
import { UsageError } from '../../errors.js';
import { createRecordWriter, defaultFormat, type Format, pick } from '../../io/records.js';
import { createStatus } from '../../io/status.js';
import { printTable } from '../../io/table.js';
import { terminalText, tsvRow } from '../../io/text.js';
import { displayWidth } from '../../io/width.js';
import { writeChunk, writeJson } from '../../io/write.js';
import { ownValue } from '../../own-keys.js';
import type { Card } from '../../spec-types.js';
import { leftOutNote, type RecordFlags, recordChoice, recordOptions, resolveColumns } from './record-flags.js';

/** What `card get` shows. */
export interface CardGetOptions {
  cardId: string;
  /** Undefined: a field/value table on a TTY, ndjson piped. */
  format?: Format;
  fields?: string[];
}

const EXAMPLES = `
On a terminal: a field/value table. Piped: the card as one line of JSON (ndjson). --format table
piped prints one "field<TAB>value" line per field (tabs and newlines in values escaped as \\t and \\n;
non-string values as JSON). --json is --format json: the card as the service sent it, indented.
--fields picks and orders the fields (_id comes first unless listed), as in card list.

Examples:
  $ cardboard card get 64f1c2e8a1b2c3d4e5f60718
  $ cardboard card get "$id" --json | jq -r .Status
  $ cardboard card get "$id" --fields Name,Status --format csv`;

/** Define `card get` under `parent`; `run` is replaceable so parse tests can spy on the options. */
export function cardGetCommand(parent: Command, ctx: ContextRef, run = runCardGet): Command {
  const command = parent.command('get').description('Show one card by its _id').argument('<cardId>', "the card's _id");
  return recordOptions(command, 'print the card as JSON')
    .addHelpText('after', EXAMPLES)
    .action(async (cardId: string, flags: RecordFlags) => {
      if (cardId.trim() === '') throw new UsageError('the card id must not be empty');
      await run(ctx(), { cardId, ...recordChoice(flags) });
    });
}

/** The card's entries: the columns asked for, else every key with `_id` first, in the order the service sent the rest. */
function entries(card: Card, columns: string[] | undefined): [string, unknown][] {
  if (columns) return columns.map((c) => [c, ownValue(card, c)]);
  return [['_id', card._id], ...Object.entries(card).filter(([k]) => k !== '_id')];
}

/**
 * Fetch the card (spec 4.4) and render it: json whole (or its --fields) and indented; ndjson and csv through
 * card list's record writer; a table as field/value rows, on a TTY drawn, piped as `field<TAB>value` lines.
 */
export async function runCardGet(ctx: Context, opts: CardGetOptions): Promise<void> {
  const format = opts.format ?? defaultFormat(ctx);
  const api = await ctx.api();
  // Checked before the card is asked for: an unknown field is a usage error, as in card list.
  const needColumns = opts.fields !== undefined || format === 'csv';
  const columns = needColumns ? await resolveColumns(api, opts.fields) : undefined;
  const card = await api.getCard(opts.cardId);
  if (format === 'json') return writeJson(ctx.stdout, columns ? pick(card, columns) : card);
  if (format === 'ndjson' || format === 'csv') {
    const writer = createRecordWriter(ctx, { format, columns: columns ?? [], project: opts.fields !== undefined });
    await writer.write(card);
    await writer.end();
    const leftOut = format === 'csv' && opts.fields === undefined ? Object.keys(card).filter((k) => !columns?.includes(k)) : [];
    if (leftOut.length > 0) createStatus(ctx).info(leftOutNote(leftOut));
    return;
  }
  const rows = entries(card, columns);
  if (ctx.stdout.isTTY) {
    // Values wrap at word boundaries; the value column is never narrower than the `_id`, so it stays on one line.
    const minWidths = [undefined, displayWidth(terminalText(card._id))];
    return printTable(ctx, ['field', 'value'], rows, { wrap: true, minWidths });
  }
  for (const [field, value] of rows) await writeChunk(ctx.stdout, tsvRow([field, value]));
}
