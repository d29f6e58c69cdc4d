// An import's own writes kept in the board's mirror (--mirror): every card the service returned for a row
// (created, updated) or a read of the board found for one is stored in the mirror before the journal
// writes the row's outcome (the journal's `outcomes`), in one transaction per scheduled journal write (every
// 200 ms at most), not one per row: a transaction syncs the disk. So a later --mirror run, whose key index
// comes from the mirror, knows every card a run of this import finished: a run killed before the
// transaction left the row `sending` in the journal, and the next run settles it by reading the board
// (recheck.ts) as for any row in flight at a kill; one killed between the two finds the card by reading too.
import type { Clock } from '../clock.js';
import { CardboardError } from '../errors.js';
import type { MirrorStore } from '../mirror/types.js';
import type { Card } from '../spec-types.js';
import type { CardSink } from './engine.js';

export class MirrorWrites implements CardSink {
  private cards: Card[] = [];
  private goneIds: string[] = [];
  /** Cards applied so far, and the cards the board answered 404 for, taken out of the mirror. */
  applied = 0;
  removed = 0;
  /** The first write the mirror refused: the run stops at its next row (see card()). */
  failure: CardboardError | undefined;

  constructor(
    private readonly store: MirrorStore,
    private readonly clock: Clock,
  ) {}

  /** A card of the board as the service answered it; kept until the next flush. */
  card(card: Card): void {
    // A mirror that refused a write must not be trusted with more: the row's outcome is never journalled
    // (the engine stops the run on this throw), and the next run settles it by reading the board.
    if (this.failure) throw this.failure;
    this.cards.push(card);
  }

  /** A posted `_id` the board answered 404 for: the mirror must not keep it (its key would name two cards). */
  gone(id: string): void {
    this.goneIds.push(id);
  }

  /** Apply what is pending, in one transaction each; never throws. False when the mirror refused (`failure`). */
  flush(): boolean {
    if (this.failure) return false;
    if (this.cards.length === 0 && this.goneIds.length === 0) return true;
    const now = new Date(this.clock.now()).toISOString();
    try {
      if (this.cards.length > 0) this.store.applyWrites(this.cards, now);
      // A 404 is the board's own word that the card is gone: placed as a deletion is.
      if (this.goneIds.length > 0) this.store.applyDeliveries(this.goneIds.map((id) => ({ kind: 'deleted', receivedAt: now, id, name: 'import' })));
      this.applied += this.cards.length;
      this.removed += this.goneIds.length;
      this.cards = [];
      this.goneIds = [];
      return true;
    } catch (err) {
      this.failure = new CardboardError(`Could not save this import's cards to the mirror at ${this.store.location}: ${(err as Error).message}; stopped.`, {
        cause: err,
        hint: 'Run the same command again once the mirror can be written (or without --mirror): the rows whose cards it could not keep are read back from the board, never sent twice.',
      });
      return false;
    }
  }
}
