import type { Command } from 'commander';
import type { Context, ContextRef } from '../../context.js';
import type { Api } from '../../api/types.js';
import { ApiError, NotAsAskedError, UsageError } from '../../errors.js';
import { NO_RETRY } from '../../http/retry.js';
import { readTextArgument } from '../../io/input.js';
import { createStatus } from '../../io/status.js';
import { textFor } from '../../io/text.js';
import { writeChunk, writeJson } from '../../io/write.js';
import { checkKeysAgainstBoard, unknownKeysError } from '../../schema/check.js';
import { parseDataObject, parsePairs } from './pairs.js';

/** What `card put` sends: the parsed pairs, the id and where `--data` comes from (read at run time). */
export interface CardPutOptions {
  fields: Record<string, unknown>;
  id?: string;
  /** A JSON object, `@file.json`, or `-` for stdin. */
  data?: string;
  allowUnknown: boolean;
  json: boolean;
}

const EXAMPLES = `
Field=value sends a string; Field:=<json> sends a JSON value (number, true/false, array, object).
Every key must match a field name exactly, case included (see \`cardboard schema\`); the service would
silently drop any other key (spec 4.3), so cardboard refuses it unless --allow-unknown.

--id (or "_id" in --data) asks for an update. What happens depends on the board's Update Mode in
Card Sources: "Update if exists" updates the card with that id (or creates one if none matches);
"Always Create New" ignores the id and creates a new card. The service does not say which mode a
board has, so cardboard sends and then looks at the answer: when its _id differs from the one sent,
a new card was made. It prints that card as usual, warns on stderr (saying which cause is likely)
and exits 5: done, but not as asked.

Examples:
  $ id=$(cardboard card put Name="Fix login" Status=Open 'Priority:=3')
  $ cardboard card put --id "$id" Status=Done 'Owner:={"name":"Ada"}'
  $ echo '{"Name":"From a file"}' | cardboard card put --data - --json`;

/** Define `card put` under `parent`; `run` is replaceable so parse tests can spy on the options. */
export function cardPutCommand(parent: Command, ctx: ContextRef, run = runCardPut): Command {
  return parent
    .command('put')
    .description('Create a card, or update one with --id (depending on the Update Mode)')
    .argument('[fields...]', "field values: Field=value (string) or Field:=<json> (typed); quote names with spaces")
    .option('--id <id>', 'the _id of the card to update (see Update Mode below)')
    .option('--data <json|@file|->', 'a JSON object of field values (inline, @file.json, or - for stdin); pairs win over it')
    .option('--allow-unknown', 'send keys that are not fields of the board (they become new fields only if Create Fields is on)')
    .option('--json', 'print the whole card instead of its _id')
    .addHelpText('after', EXAMPLES)
    .action(async (pairs: string[], flags: { id?: string; data?: string; allowUnknown?: boolean; json?: boolean }) => {
      if (flags.id === '') throw new UsageError('--id must not be empty');
      await run(ctx(), {
        fields: parsePairs(pairs),
        id: flags.id,
        data: flags.data,
        allowUnknown: flags.allowUnknown ?? false,
        json: flags.json ?? false,
      });
    });
}

/** The request body: --data under the pairs, then --id; `_id` must be a string (spec 2.2). */
async function buildCardBody(ctx: Context, opts: CardPutOptions): Promise<Record<string, unknown>> {
  const data = opts.data === undefined ? {} : parseDataObject(await readTextArgument(ctx, opts.data, '--data'));
  const body: Record<string, unknown> = { ...data, ...opts.fields };
  if (opts.id !== undefined) body._id = opts.id;
  if (body._id !== undefined && typeof body._id !== 'string') throw new UsageError('_id must be a string');
  if (Object.keys(body).every((k) => k === '_id')) {
    throw new UsageError('no field values given', { hint: 'Example: cardboard card put Name="Fix login" Status=Open' });
  }
  return body;
}

/** Check every key against the schema, send the card, report the id (or card) on stdout. */
export async function runCardPut(ctx: Context, opts: CardPutOptions): Promise<void> {
  const body = await buildCardBody(ctx, opts);
  const status = createStatus(ctx);
  const api = await ctx.api();
  const { unknown } = await checkKeysAgainstBoard(api, Object.keys(body));
  if (unknown.length > 0 && !opts.allowUnknown) {
    throw unknownKeysError(unknown, ' Nothing was sent; --allow-unknown sends it anyway.');
  }
  for (const u of unknown) {
    // Spec 4.3 rules 1-2: an unknown key is dropped, or becomes a new field when Create Fields is on.
    status.warn(`'${u.key}' is not a field of the board; sent anyway: with Create Fields on it becomes a new field, otherwise the service drops it.`);
  }
  const card = await api.putCard(body);
  if (opts.json) await writeJson(ctx.stdout, card);
  else await writeChunk(ctx.stdout, `${textFor(ctx.stdout, card._id)}\n`);
  if (typeof body._id === 'string' && card._id !== body._id) throw await newCardInstead(api, body._id, card._id, ctx.signal);
}

/**
 * Spec 4.3 rules 3-4: the id is ignored under "Always Create New", and a POST whose id matches no card creates
 * one. The mode cannot be read (the API does not expose it), so the card asked for is looked up once (spec
 * 4.4): found, the mode is the likely cause; not found, the id is. The lookup is a hint only: it never retries
 * and never fails the run.
 */
async function newCardInstead(api: Api, asked: string, made: string, signal: AbortSignal): Promise<NotAsAskedError> {
  const head = `the board created a new card (${made}) instead of updating ${asked}`;
  const found = await api.getCard(asked, { retry: NO_RETRY, signal }).then(
    () => true,
    (err: unknown) => (err instanceof ApiError && err.status === 404 ? false : undefined),
  );
  if (found === true) {
    return new NotAsAskedError(`${head}: that card exists, so the board's Update Mode is most likely "Always Create New".`, {
      hint: 'To update cards by _id, set the board\'s Update Mode to "Update if exists" (Card Sources). Exit code 5: done, but not as asked.',
    });
  }
  if (found === false) {
    return new NotAsAskedError(`${head}: no card has that id, and the service creates a new card then (spec 4.3).`, {
      hint: 'Check the id (`cardboard card list`). Exit code 5: done, but not as asked.',
    });
  }
  return new NotAsAskedError(`${head}: its Update Mode is probably "Always Create New", or no card has that id.`, {
    hint: 'Exit code 5: done, but not as asked.',
  });
}
