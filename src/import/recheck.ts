// "May have been applied" is settled by reading the board, never by sending again: a row whose POST may
// have created a card (500, 502, 504, a reset or a timeout after sending, a 2xx without an `_id`, a row
// in flight when an earlier run was killed) waits here for one shared read of the board, which looks for
// its card: by the --match-on key, or else by content (a card equal in every field the row sends, that
// no other row of this import has taken). One read answers every row waiting when it starts (rows arriving
// during a read wait for the next), instead of one whole-board read per row.
import type { SeenIds } from '../api/seen-ids.js';
import type { Api } from '../api/types.js';
import type { Card } from '../spec-types.js';
import { cardKey, digestOf, scanCards } from './match-index.js';

/** Rows waiting beyond this start a read before the run is otherwise idle: their bodies are held in memory. */
const MAX_WAITING = 5000;

/** What identifies a row's card on the board: its --match-on key, or the values it sent. */
export type Probe = { kind: 'key'; key: string } | { kind: 'content'; body: Readonly<Record<string, unknown>> };

interface Waiter {
  resolve(card: Card | undefined): void;
  reject(err: unknown): void;
}

/** Content waiters sharing one set of fields: by the digest of their values over those fields. */
interface ContentGroup {
  fields: string[];
  byDigest: Map<string, Waiter[]>;
}

interface Batch {
  keys: Map<string, Waiter[]>;
  groups: Map<string, ContentGroup>;
  size: number;
}

const emptyBatch = (): Batch => ({ keys: new Map(), groups: new Map(), size: 0 });

/** The batch re-check; `ready()` says when a read may start (the engine: no row left to send first). */
export class BoardRecheck {
  private waiting = emptyBatch();
  private reading = false;
  /** Rows in find() not answered yet (waiting, or in the read under way): the engine counts them idle. */
  unanswered = 0;
  /** Whole-board reads made so far. */
  reads = 0;

  /**
   * `field`: the --match-on field (key probes); `owned`: ids of cards rows of this import created or
   * updated, which a content probe never takes (a found card is added to it).
   */
  constructor(
    private readonly api: Api,
    private readonly field: string | undefined,
    private readonly owned: SeenIds,
    private readonly ready: () => boolean,
    private readonly signal?: AbortSignal,
  ) {}

  /** The row's card as the next read finds it, or undefined when the board holds none. */
  find(probe: Probe): Promise<Card | undefined> {
    return new Promise((resolve, reject) => {
      const waiter: Waiter = { resolve, reject };
      const batch = this.waiting;
      if (probe.kind === 'key') push(batch.keys, probe.key, waiter);
      else {
        const fields = Object.keys(probe.body).filter((f) => f !== '_id').sort();
        const sig = JSON.stringify(fields);
        let g = batch.groups.get(sig);
        if (!g) batch.groups.set(sig, (g = { fields, byDigest: new Map() }));
        push(g.byDigest, digestOf(probe.body, fields), waiter);
      }
      batch.size++;
      this.unanswered++;
      this.poke();
    });
  }

  /** Rows waiting for a read. */
  get pending(): number {
    return this.waiting.size;
  }

  /** Start a read if rows wait and the run has nothing else to do first (or too many rows wait). */
  poke(): void {
    if (this.reading || this.waiting.size === 0) return;
    if (this.waiting.size < MAX_WAITING && !this.ready()) return;
    this.reading = true;
    const batch = this.waiting;
    this.waiting = emptyBatch();
    void this.read(batch);
  }

  private async read(batch: Batch): Promise<void> {
    let left = batch.size;
    const found = (list: Waiter[] | undefined, card: Card): void => {
      const waiter = list?.shift();
      if (!waiter) return;
      left--;
      waiter.resolve(card);
    };
    this.reads++;
    try {
      await scanCards(
        this.api,
        (card) => {
          if (this.field !== undefined && batch.keys.size > 0) {
            const key = cardKey(card, this.field);
            // Every row of one key is answered by its first card (a key is unique per row in a run).
            if (key !== undefined) {
              const list = batch.keys.get(key);
              if (list) {
                while (list.length > 0) found(list, card);
                batch.keys.delete(key);
              }
            }
          }
          if (batch.groups.size > 0 && !this.owned.has(card._id)) {
            for (const group of batch.groups.values()) {
              const list = group.byDigest.get(digestOf(card, group.fields));
              if (list && list.length > 0) {
                this.owned.add(card._id);
                found(list, card);
                break;
              }
            }
          }
          return left === 0 ? true : undefined;
        },
        this.signal,
      );
      for (const list of batch.keys.values()) for (const w of list) w.resolve(undefined);
      for (const g of batch.groups.values()) for (const list of g.byDigest.values()) for (const w of list) w.resolve(undefined);
    } catch (err) {
      for (const list of batch.keys.values()) for (const w of list) w.reject(err);
      for (const g of batch.groups.values()) for (const list of g.byDigest.values()) for (const w of list) w.reject(err);
    } finally {
      // The answered rows are busy again (sending, or finishing) before the next read may start.
      this.unanswered -= batch.size;
      this.reading = false;
    }
    this.poke();
  }
}

function push<K>(map: Map<K, Waiter[]>, key: K, waiter: Waiter): void {
  const list = map.get(key);
  if (list) list.push(waiter);
  else map.set(key, [waiter]);
}
