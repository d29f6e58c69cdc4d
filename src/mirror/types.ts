// The mirror of a board: what its storage keeps and what its users (pull, listen, card list, query, import) ask of
// it. The storage is one small interface so that another engine (a database server) can stand behind it.
import type { Clock } from '../clock.js';
import type { Card, Field } from '../spec-types.js';
import type { PullLock } from './pull-lock.js';

/** Which board of which service a mirror holds. */
export interface MirrorBoard {
  /** The service's base URL as configured (shown; `server` is what identifies it). */
  baseUrl: string;
  /** The server's identity whatever its spelling (serverIdentity in src/import/board-lock.ts). */
  server: string;
  /** The board's id. */
  id: string;
}

/** A pull in progress or resumed: what it has done so far. */
export interface PullCursor {
  /** The pull's number in this mirror, from 1. */
  id: number;
  /** When it began (ISO 8601), in the first process that ran it. */
  startedAt: string;
  /** The last delivery applied when it began: deliveries after it are newer than any page of this walk. */
  startSeq: number;
  /** The next page to read (zero-based). */
  nextPage: number;
  /** Pages and cards saved so far (a card on two pages counts twice). */
  pages: number;
  cards: number;
  /** True when an earlier process began it (Ctrl-C, kill -9) and this one goes on from `nextPage`. */
  resumed: boolean;
}

/** What a write did to a card of the mirror: `before` absent for a card new to it, `after` absent when it left. */
export interface MirrorChange {
  id: string;
  before?: Card;
  after?: Card;
}

/** A verified delivery as the mirror places it (classified by the webhook engine, never guessed). */
export type MirrorDelivery =
  /** A card's body: its keys are merged into the card kept (a server may send only what changed). */
  | { kind: 'card'; receivedAt: string; card: Card; name?: string }
  | { kind: 'deleted'; receivedAt: string; id: string; name?: string }
  /** A comment on a card: counted, no card changes. */
  | { kind: 'comment'; receivedAt: string; cardId?: string; name?: string }
  /** Nothing the mirror can place (an upload, an undocumented body): kept in `deliveries` with its text, counted. */
  | { kind: 'unplaced'; receivedAt: string; name?: string; cardId?: string; body: string };

/** Where a mirror stands, for `mirror status` and the freshness rule. */
export interface MirrorStatus {
  location: string;
  board: MirrorBoard;
  cards: number;
  /** The last complete pull: when it ended, and cards it deleted. */
  lastPull?: { id: number; startedAt: string; finishedAt: string; pages: number; cards: number; deleted: number };
  /** A pull begun and not finished (interrupted or running). */
  openPull?: { id: number; startedAt: string; nextPage: number; pages: number; cards: number };
  /** Deliveries applied since the last complete pull began, and of those the ones it could not place. */
  deliveries: { applied: number; unplaced: number; lastAt?: string };
  /** A listener feeding this mirror: since when, and its last sign of life (it writes one at least every LISTENER_BEAT_MS). */
  listener?: { since: string; beatAt: string };
}

/** How often a listener feeding the mirror says it is alive; a beat older than twice this means it is gone. */
export const LISTENER_BEAT_MS = 10_000;

/**
 * The storage of one board's mirror. Every method is synchronous and every write is one transaction, durable
 * against a crash of the process when it returns (the listener answers 200 only after `applyDeliveries`), and
 * against a crash of the machine after the next `sync`.
 * Several processes may have one mirror open at once (a listener and a pull): writes wait for each other.
 */
export interface MirrorStore {
  /** The file (or server) the mirror is in, as shown to the user; never holds a secret. */
  readonly location: string;
  readonly board: MirrorBoard;

  /** The board's schema as last saved (undefined before the first save); saving rebuilds the per-field view. */
  schema(): Field[] | undefined;
  saveSchema(fields: readonly Field[]): void;

  /** One card, as the mirror holds it. */
  card(id: string): Card | undefined;
  /** Cards now in the mirror. */
  count(): number;
  /** Every card, in board order (the order the last pull read them in, cards new since then at the end), streamed. */
  cards(): Iterable<Card>;

  /** Begin a pull, or go on with the one an earlier process left unfinished. */
  beginPull(now: string): PullCursor;
  /**
   * Abandon the pull an earlier process left unfinished, so that the next beginPull starts a new one at page
   * 0: the cards it saved stay, and count as unseen by the next pull. Returns it, or undefined when none was open.
   */
  abandonPull(): PullCursor | undefined;
  /** Whether this pull already saved the card (the page walk's repeated-page check). */
  pulledBy(pull: PullCursor, id: string): boolean;
  /**
   * Save one page read by `pull` and advance its `nextPage` past `page`, in one transaction. A card a delivery
   * changed or deleted since the pull began keeps what the delivery said (the page may be older). Returns the
   * changes made (new and changed cards).
   */
  savePage(pull: PullCursor, page: number, cards: readonly Card[]): MirrorChange[];
  /**
   * Cards this pull has not seen and no delivery or write touched since it began: the ones the board may have
   * lost (or that moved past the walk while pages shifted). `missed`: complete pulls before this one in a row
   * that did not see the card either (kept then, unconfirmed).
   */
  unseen(pull: PullCursor): { id: string; missed: number }[];
  /** A card confirmed by reading it alone (GET one card): kept as read, seen by this pull. */
  confirm(pull: PullCursor, card: Card): MirrorChange | undefined;
  /**
   * End a complete walk: delete the cards in `gone`, count one more miss for every other unseen card (kept,
   * unconfirmed), mark the pull finished, and forget the bookkeeping older than it (deliveries before its
   * start, tombstones). Returns the deleted cards.
   */
  finishPull(pull: PullCursor, gone: readonly string[], now: string): MirrorChange[];

  /** Apply verified deliveries in their order, in one transaction; the changes they made to cards. */
  applyDeliveries(deliveries: readonly MirrorDelivery[]): MirrorChange[];
  /**
   * Cards the service returned for this client's own writes (an import's creates and updates): kept whole, and
   * newer than any page a running pull read before (as a delivery is).
   */
  applyWrites(cards: readonly Card[], now: string): MirrorChange[];
  /**
   * Make every write returned so far survive a crash of the machine too (a returned write survives a crash of
   * the process already). A listener calls it about once a second while deliveries come, and at its stop.
   */
  sync(): void;
  /** A listener feeding the mirror is alive; `since` is when it started. */
  listenerBeat(since: string, now: string): void;
  /** The listener stopped. */
  listenerGone(since: string): void;

  /**
   * Take the mirror's pull lock: one `mirror pull` of a mirror at a time, on this machine or another. Refused
   * (CardboardError, exit 1, pullRunning of pull-lock.ts) while another pull holds it, naming that one.
   */
  lockPull(clock: Clock): Promise<PullLock>;

  status(): MirrorStatus;
  close(): void;
}

/** One read-only statement's result: column names and rows streamed as arrays. */
export interface QueryResult {
  columns: string[];
  rows: Iterable<unknown[]>;
}

/**
 * A read-only connection to a mirror, for `cardboard query`. A statement that would write (or attach, or
 * change a setting) is refused before it runs, and the connection itself cannot write.
 */
export interface MirrorReader {
  readonly location: string;
  query(sql: string): QueryResult;
  close(): void;
}

/** Whether a mirror can answer for the board now, and why (for `--mirror` users and `mirror status`). */
export interface Freshness {
  fresh: boolean;
  /** Time since the mirror last knew the board whole: the last complete pull, or now while a listener feeds it. */
  ageMs?: number;
  /** One line: "pulled 3 min ago", "fed by a listener since 10:02", "never pulled", "pulled 2 h ago (older than --max-age 15m)". */
  reason: string;
}
