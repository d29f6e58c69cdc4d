// The page walk that fills a mirror (`cardboard mirror pull`): every page into the store, resumable, then a
// reconcile by `_id` (spec 4.5 lists no deletions). It emits typed events and never prints.
//
// What one walk can see, and why the store answers each question rather than a set of ids kept here (the
// memory of a pull must not grow with the board):
// - pages shift while cards change: a card deleted on an earlier page moves the rest one place left, so a
//   card can pass from the page not yet read to the one just read and be skipped. It is then `unseen` at the
//   end and read alone (GET, spec 4.4) before anything is deleted: found, it is kept as read.
// - a card on two pages (a card created ahead of the reader moves the rest right) is saved twice, the
//   second time over the first: one row. Many created in front (during the walk, or between a kill and the
//   resume) make whole pages of cards this pull saved: the walk goes through them, and only a server
//   repeating itself ends it (walk.ts).
// - a card created during the walk may be past the page being read when it lands, or before it: the next
//   pull (or a delivery) brings it. A card changed after its page was read keeps the older values until then.
import type { Api, PagesRead } from '../api/types.js';
import type { Clock } from '../clock.js';
import { ApiError } from '../errors.js';
import type { Card } from '../spec-types.js';
import type { MirrorChange, MirrorStore, PullCursor } from './types.js';
import { pullPages } from './walk.js';

/** Tries of each page and of each GET of one card: a whole-board walk is patient (as `import` is). */
const PULL_TRIES = 8;
/** Cards a complete walk may read alone (GET) at least, whatever the number of pages it read. */
const MIN_VERIFY_BUDGET = 20;

/** What a pull reports while it runs. */
export type PullEvent =
  /** The pull began at page 0, or goes on with one an earlier process left (`resumed`). */
  | { type: 'begun'; pull: PullCursor }
  /** A page saved: its number, this run's count so far, and what it changed. */
  | { type: 'page'; page: number; read: PagesRead; changes: MirrorChange[] }
  /** The walk reached the empty page: `candidates` cards unseen, `toVerify` of them to read alone. */
  | { type: 'reconcile'; candidates: number; toVerify: number }
  /** A card read alone: kept (`change` when its values moved on since the mirror's copy), or gone (404). */
  | { type: 'verified'; id: string; found: boolean; change?: MirrorChange }
  /** The pull is finished: the cards it deleted. */
  | { type: 'deleted'; changes: MirrorChange[] };

/** What a finished pull did. */
export interface PullSummary {
  /** The pull's number in this mirror. */
  pull: number;
  /** Where this run began, when it went on with a pull an earlier process left. */
  resumedAt?: { page: number; startedAt: string };
  /** Pages and cards read by this run (a card on two pages twice). */
  pages: number;
  cards: number;
  /** Cards new to the mirror, changed in it, and deleted from it. */
  new: number;
  changed: number;
  deleted: number;
  /** Cards read alone (GET) to tell a skipped card from a deleted one. */
  verified: number;
  /** Unseen cards kept without a check (the verify budget was spent): the next pull looks again. */
  unconfirmed: number;
  /** Requests made: the schema, each page (the empty one too) and each GET (retries not counted). */
  requests: number;
  /** Cards in the mirror after the pull. */
  total: number;
  ms: number;
}

export interface PullOptions {
  /** Stop now: the page in flight is not saved, every page before it is, and the next pull resumes there. */
  signal: AbortSignal;
  clock: Pick<Clock, 'now'>;
  onEvent?: (event: PullEvent) => void;
  /** Cards read alone at most (default: the pages this walk read, at least MIN_VERIFY_BUDGET). */
  verifyBudget?: number;
}

/** Counts of what a list of changes did: new cards (no `before`) and changed ones. */
function tally(changes: readonly MirrorChange[], into: { new: number; changed: number }): void {
  for (const change of changes) {
    if (change.before === undefined) into.new++;
    else if (change.after !== undefined) into.changed++;
  }
}

const iso = (clock: Pick<Clock, 'now'>) => new Date(clock.now()).toISOString();

/**
 * Pull the board into `store`: its schema, every page from where the open pull stopped (or 0), then the
 * reconcile of a complete walk. Throws what the client throws (after PULL_TRIES tries): the pages saved stay
 * saved and the next pull resumes after them.
 */
export async function pullMirror(api: Api, store: MirrorStore, opts: PullOptions): Promise<PullSummary> {
  const { signal, clock } = opts;
  const emit = opts.onEvent ?? (() => {});
  const began = clock.now();
  const count = { new: 0, changed: 0 };
  store.saveSchema(await api.getSchema({ signal, maxTries: PULL_TRIES }));
  let requests = 1;
  const cursor = store.beginPull(iso(clock));
  emit({ type: 'begun', pull: { ...cursor } });
  const start = cursor.nextPage;
  let read: PagesRead = { page: start, pages: 0, cards: 0 };
  // The store knows which cards this pull saved (in this process or before a kill): no set held here.
  const walk = pullPages(api, store, cursor, { signal, maxTries: PULL_TRIES, onPage: (r) => (read = r) });
  let index = 0;
  // One page read ahead: the next page is asked for before this one is saved, so a page's transaction (and
  // its fsync) overlaps the next request instead of adding to it. The walk checks the next page against
  // the store only once it has arrived, after this page was saved (savePage is synchronous).
  let next = walk.next();
  for (;;) {
    const step = await next;
    if (step.done) break;
    next = walk.next();
    // Awaited above on the next turn; marked handled so a failure while this page is saved is not unhandled.
    next.catch(() => {});
    const page = start + index++;
    const changes = store.savePage(cursor, page, step.value);
    tally(changes, count);
    requests++;
    emit({ type: 'page', page, read: { ...read, page }, changes });
  }
  requests++; // the empty page that ended the walk
  const settled = await reconcile(api, store, cursor, opts, index, count);
  requests += settled.verified;
  const deleted = store.finishPull(cursor, settled.gone, iso(clock));
  emit({ type: 'deleted', changes: deleted });
  const resumedAt = cursor.resumed ? { resumedAt: { page: start, startedAt: cursor.startedAt } } : {};
  return {
    pull: cursor.id,
    ...resumedAt,
    pages: read.pages,
    cards: read.cards,
    ...count,
    deleted: deleted.length,
    verified: settled.verified,
    unconfirmed: settled.unconfirmed,
    requests,
    total: store.count(),
    ms: clock.now() - began,
  };
}

/**
 * The cards a complete walk did not see: one unseen by the previous complete pull too (`missed` ≥ 1) is gone
 * without a request; the others are read alone while the budget lasts (found: kept as read; 404: gone;
 * any other failure ends the pull, which the next run resumes at its end to reconcile again); past the
 * budget they are kept unconfirmed, and finishPull counts them a miss.
 */
async function reconcile(api: Api, store: MirrorStore, cursor: PullCursor, opts: PullOptions, pagesRead: number, count: { new: number; changed: number }) {
  const candidates = store.unseen(cursor);
  const budget = opts.verifyBudget ?? Math.max(MIN_VERIFY_BUDGET, pagesRead);
  const fresh = candidates.filter((c) => c.missed < 1);
  const toVerify = Math.min(budget, fresh.length);
  opts.onEvent?.({ type: 'reconcile', candidates: candidates.length, toVerify });
  const gone = candidates.filter((c) => c.missed >= 1).map((c) => c.id);
  let verified = 0;
  for (const { id } of fresh.slice(0, toVerify)) {
    verified++;
    let card: Card;
    try {
      card = await api.getCard(id, { signal: opts.signal, maxTries: PULL_TRIES });
    } catch (err) {
      // Spec 4.4 answers a card that is not there with a 404 (never retried: a refusal).
      if (err instanceof ApiError && err.status === 404) {
        gone.push(id);
        opts.onEvent?.({ type: 'verified', id, found: false });
        continue;
      }
      throw err;
    }
    const change = store.confirm(cursor, card);
    if (change) tally([change], count);
    opts.onEvent?.({ type: 'verified', id, found: true, ...(change ? { change } : {}) });
  }
  return { gone, verified, unconfirmed: fresh.length - toVerify };
}

/** How `pullEvery` runs: the wait between the end of one pull and the start of the next, and what to do with failures. */
export interface EveryOptions {
  everyMs: number;
  signal: AbortSignal;
  clock: Pick<Clock, 'sleep'>;
  /** A pull ended. */
  onPulled(summary: PullSummary): void;
  /** A pull failed: true to go on at the next turn (the board may be back), false to end with the error. */
  onFailure(err: unknown): boolean;
}

/** Pull, wait `everyMs`, pull again, until `signal` aborts (then it resolves with the pulls finished). */
export async function pullEvery(pull: () => Promise<PullSummary>, opts: EveryOptions): Promise<number> {
  let finished = 0;
  for (;;) {
    try {
      opts.onPulled(await pull());
      finished++;
    } catch (err) {
      if (opts.signal.aborted || !opts.onFailure(err)) throw err;
    }
    await opts.clock.sleep(opts.everyMs, opts.signal);
    if (opts.signal.aborted) return finished;
  }
}
