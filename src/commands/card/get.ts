import type { Command } from 'commander';
import type { Context, ContextRef } from '../../context.js';
import { UsageError } from '../../errors.js';
import { printTable } from '../../io/table.js';
import { terminalText, tsvRow } from '../../io/text.js';
import { displayWidth } from '../../io/width.js';
import { writeChunk, writeJson } from '../../io/write.js';
import type { Card } from '../../spec-types.js';

/** What `card get` shows. */
export interface CardGetOptions {
  cardId: string;
  json: boolean;
}

const EXAMPLES = `
On a terminal: a field/value table. Piped: one "field<TAB>value" line per field (tabs and newlines
in values escaped as \\t and \\n; non-string values as JSON). --json prints the card as the service sent it.

Examples:
  $ cardboard card get 64f1c2e8a1b2c3d4e5f60718
  $ cardboard card get "$id" --json | jq -r .Status`;

/** Define `card get` under `parent`; `run` is replaceable so parse tests can spy on the options. */
export function cardGetCommand(parent: Command, ctx: ContextRef, run = runCardGet): Command {
  return parent
    .command('get')
    .description('Show one card by its _id')
    .argument('<cardId>', "the card's _id")
    .option('--json', 'print the card as JSON')
    .addHelpText('after', EXAMPLES)
    .action(async (cardId: string, flags: { json?: boolean }) => {
      if (cardId.trim() === '') throw new UsageError('the card id must not be empty');
      await run(ctx(), { cardId, json: flags.json ?? false });
    });
}

/** The card's entries with `_id` first, in the order the service sent the rest. */
function entries(card: Card): [string, unknown][] {
  return [['_id', card._id], ...Object.entries(card).filter(([k]) => k !== '_id')];
}

/** Fetch the card (spec 4.4) and render it: table on a TTY, field<TAB>value piped, or JSON. */
export async function runCardGet(ctx: Context, opts: CardGetOptions): Promise<void> {
  const api = await ctx.api();
  const card = await api.getCard(opts.cardId);
  if (opts.json) return writeJson(ctx.stdout, card);
  if (ctx.stdout.isTTY) {
    // Values wrap at word boundaries; the value column is never narrower than the `_id`, so it stays on one line.
    const minWidths = [undefined, displayWidth(terminalText(card._id))];
    return printTable(ctx, ['field', 'value'], entries(card), { wrap: true, minWidths });
  }
  for (const [field, value] of entries(card)) await writeChunk(ctx.stdout, tsvRow([field, value]));
}
