// --match-on: the shared re-check of creates that may or may not have applied (issue 10, point 6).
// A row whose create failed uncertainly waits here; one read of the board answers every row waiting
// when it starts (rows arriving during a read wait for the next), instead of one whole-board read per row.
import type { Api } from '../api/types.js';
import { cardKey, scanCards } from './match-index.js';

/** Rows waiting beyond this start a read before the run is otherwise idle: their bodies are held in memory. */
export const MAX_WAITING = 5000;

interface Waiter {
  resolve(id: string | undefined): void;
  reject(err: unknown): void;
}

/** The batch re-check; `ready()` says when a read may start (the engine: no row left to send first). */
export class BoardRecheck {
  private waiting = new Map<string, Waiter[]>();
  private count = 0;
  private reading = false;
  /** Rows in find() not answered yet (waiting, or in the read under way): the engine counts them idle. */
  held = 0;
  /** Whole-board reads made so far. */
  reads = 0;

  constructor(
    private readonly api: Api,
    private readonly field: string,
    private readonly ready: () => boolean,
    private readonly signal?: AbortSignal,
  ) {}

  /** The `_id` of the card holding `key` after the next read, or undefined when there is none. */
  find(key: string): Promise<string | undefined> {
    return new Promise((resolve, reject) => {
      const list = this.waiting.get(key);
      if (list) list.push({ resolve, reject });
      else this.waiting.set(key, [{ resolve, reject }]);
      this.count++;
      this.held++;
      this.poke();
    });
  }

  /** Rows waiting for a read. */
  get pending(): number {
    return this.count;
  }

  /** Start a read if rows wait and the run has nothing else to do first (or too many rows wait). */
  poke(): void {
    if (this.reading || this.count === 0) return;
    if (this.count < MAX_WAITING && !this.ready()) return;
    this.reading = true;
    const batch = this.waiting;
    this.waiting = new Map();
    this.count = 0;
    void this.read(batch);
  }

  private async read(batch: Map<string, Waiter[]>): Promise<void> {
    const found = new Map<string, string>();
    this.reads++;
    try {
      await scanCards(
        this.api,
        (card) => {
          const key = cardKey(card, this.field);
          if (key !== undefined && batch.has(key) && !found.has(key)) found.set(key, card._id);
          return found.size === batch.size ? true : undefined;
        },
        this.signal,
      );
      for (const [key, list] of batch) for (const w of list) w.resolve(found.get(key));
    } catch (err) {
      for (const list of batch.values()) for (const w of list) w.reject(err);
    } finally {
      // The answered rows are busy again (sending, or finishing) before the next read may start.
      for (const list of batch.values()) this.held -= list.length;
      this.reading = false;
    }
    this.poke();
  }
}
