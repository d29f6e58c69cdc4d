// What passes between the PostgreSQL store on the thread that uses it (store.ts: MirrorStore, synchronous) and the
// thread that talks to the server (worker.ts), which runs each operation as one of these asynchronous calls.
import type { Card, Field } from '../../spec-types.js';
import type { MirrorBoard, MirrorChange, MirrorDelivery, MirrorStatus, PullCursor } from '../types.js';

/** How the thread reaches the server. */
export interface PgTarget {
  /** CARDBOARD_MIRROR as given: it may hold a password, so it is never shown nor put in an error. */
  url: string;
  /** The URL as shown to the user: without its password (location.ts). */
  location: string;
  /** The environment libpq would read (PGPASSWORD, PGHOST, PGSSLMODE…): the run's, not the process's. */
  env: Record<string, string | undefined>;
}

/** Open one board's mirror on the server: made (tables, board row) when `create`, else notFilled when absent. */
export interface PgOpenJob {
  target: PgTarget;
  board: MirrorBoard;
  create: boolean;
}

/**
 * MirrorStore's operations as the thread runs them, asynchronously, on its connection to the server; `cards()`
 * is a walk of one snapshot, read in batches of JSON text (the text kept, exactly as written).
 */
export interface PgStoreOps {
  /** Take the board's pull lock (one `mirror pull` at a time), held by the writer's session; refused when held. */
  lockPull(): Promise<void>;
  /** Release the pull lock (nothing when not held). */
  unlockPull(): Promise<void>;
  schema(): Promise<Field[] | undefined>;
  saveSchema(fields: Field[]): Promise<void>;
  card(id: string): Promise<Card | undefined>;
  count(): Promise<number>;
  /** Begin a walk of every card in board order, in one snapshot; returns its number. */
  cardsOpen(): Promise<number>;
  /** Up to `max` more cards of walk `walk`, each its JSON text; fewer than `max` at the end, which ends the walk. */
  cardsNext(walk: number, max: number): Promise<string[]>;
  /** End walk `walk` before its end (a reader that stopped early); nothing when it has ended. */
  cardsClose(walk: number): Promise<void>;
  beginPull(now: string): Promise<PullCursor>;
  abandonPull(): Promise<PullCursor | undefined>;
  pulledBy(pull: PullCursor, id: string): Promise<boolean>;
  savePage(pull: PullCursor, page: number, cards: Card[]): Promise<MirrorChange[]>;
  unseen(pull: PullCursor): Promise<{ id: string; missed: number }[]>;
  confirm(pull: PullCursor, card: Card): Promise<MirrorChange | undefined>;
  finishPull(pull: PullCursor, gone: string[], now: string): Promise<MirrorChange[]>;
  applyDeliveries(deliveries: MirrorDelivery[]): Promise<MirrorChange[]>;
  applyWrites(cards: Card[], now: string): Promise<MirrorChange[]>;
  sync(): Promise<void>;
  listenerBeat(since: string, now: string): Promise<void>;
  listenerGone(since: string): Promise<void>;
  status(): Promise<MirrorStatus>;
  close(): Promise<void>;
}

/** `cardboard query` on the server: one read-only statement over one board's mirror, its rows in batches. */
export interface PgReaderOps {
  /** Check and start `sql` (refused before it reaches the server when it would write); its column names. */
  queryOpen(sql: string): Promise<string[]>;
  /** Up to `max` more rows as arrays; fewer than `max` at the end, which ends the statement. */
  queryNext(max: number): Promise<unknown[][]>;
  /** End the statement before its end. */
  queryClose(): Promise<void>;
  close(): Promise<void>;
}
