import type { Context } from '../../context.js';
import { CancelledError, CardboardError } from '../../errors.js';
import { createStatus } from '../../io/status.js';
import { plural } from '../../io/text.js';
import { freshness } from '../../mirror/fresh.js';
import { openMirror } from '../../mirror/open.js';
import type { MirrorBoard, MirrorStore } from '../../mirror/types.js';
import { checkKeys } from '../../schema/match.js';
import { unknownKeysError } from '../../schema/check.js';
import { parseWhere, whereFilter } from '../../schema/where.js';
import type { Card } from '../../spec-types.js';
import { selectedMirrorBoard } from '../mirror/open-board.js';
import { MAX_TABLE_ROWS } from './list-live.js';
import type { CardListOptions, Listing } from './listing.js';
import { columnsOf } from './record-flags.js';

/** Cards handed to the writer at a time: the mirror streams its rows, and the writer flushes between batches. */
const BATCH = 1000;

/**
 * The mirror of the selected board, which must have been pulled whole at least once (openMirror says where
 * it looked when there is none): a mirror fed only by a listener, or whose first pull was stopped, holds
 * only some of the cards.
 */
function openPulled(ctx: Context, board: MirrorBoard): MirrorStore {
  const store = openMirror(ctx.env, board, { create: false });
  if (store.status().lastPull === undefined || store.schema() === undefined) {
    store.close();
    throw new CardboardError(`The mirror of board ${board.id} at ${store.location} has not been pulled whole yet.`, {
      hint: 'Run `cardboard mirror pull` (it goes on from where a stopped pull left off).',
    });
  }
  return store;
}

/**
 * The listing of the board's mirror: no request to the service; the schema of the columns, --fields and
 * --where is the one the mirror saved with its last pull. Says on stderr, in one line, how old the mirror is.
 * A terminal table stops at MAX_TABLE_ROWS, as a live one does.
 */
export async function mirrorListing(ctx: Context, opts: CardListOptions, table: boolean, columnsNeeded: boolean): Promise<Listing> {
  const store = openPulled(ctx, await selectedMirrorBoard(ctx));
  let open = true;
  const close = () => {
    if (open) store.close();
    open = false;
  };
  try {
    const schema = store.schema() ?? [];
    const terms = parseWhere(opts.where ?? [], schema);
    const unknown = checkKeys(opts.fields ?? [], schema);
    if (unknown.length > 0) throw unknownKeysError(unknown, ' --fields takes exact field names (as of the last pull).');
    const columns = columnsNeeded ? columnsOf(opts.fields, schema) : [];
    // A terminal table holds its rows until the end, as one of the live pages does: the same cap.
    const cap = table ? MAX_TABLE_ROWS : undefined;
    const status = store.status();
    // No age is too old here: the line says how old, and the user judges.
    const fresh = freshness(status, Number.POSITIVE_INFINITY, ctx.clock.now());
    createStatus(ctx).info(`From the mirror (${fresh.reason}, ${plural(status.cards, 'card')}).`);
    return { columns, keep: whereFilter(terms), pages: batches(store.cards(), ctx.signal), what: terms.length > 0 ? 'matching cards' : 'cards', footer: async () => undefined, cap, close };
  } catch (err) {
    close();
    throw err;
  }
}

/**
 * The mirror's cards in batches of BATCH. SQLite reads them synchronously, and a writer whose reader keeps up
 * (a file, a fast pipe) never waits: so the event loop turns between batches, for Ctrl-C and SIGTERM to be
 * heard, and the walk stops once `signal` has aborted. Without the turn, a listing of a million cards ran
 * to its end, seconds after Ctrl-C, and exited 0.
 */
async function* batches(cards: Iterable<Card>, signal: AbortSignal): AsyncIterable<Card[]> {
  let batch: Card[] = [];
  for (const card of cards) {
    batch.push(card);
    if (batch.length < BATCH) continue;
    yield batch;
    batch = [];
    await new Promise<void>((resolve) => setImmediate(resolve));
    if (signal.aborted) throw new CancelledError('Interrupted.', { cause: signal.reason });
  }
  if (batch.length > 0) yield batch;
}
