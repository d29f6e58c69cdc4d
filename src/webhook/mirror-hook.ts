// `webhook listen --mirror`: each verified delivery, read as CardStates reads it (changes.ts), placed in the
// board's mirror before its 200, and the mirror's cards as they were before it remembered for its change line.
import type { MirrorChange, MirrorDelivery, MirrorStore } from '../mirror/types.js';
import type { Card } from '../spec-types.js';
import { type CardStates, type ParsedBody, parseBody, readBody } from './changes.js';
import { type Delivery, mayShowSecret } from './delivery.js';
import type { DeliveryHook } from './listener.js';

/** Deliveries a listener applied to the mirror so far: placed (a card, a delete, a comment) and not. */
export interface MirrorCounts {
  applied: number;
  unplaced: number;
}

/**
 * A delivery as the mirror places it, never guessed: a card with an `_id`, a delete that names its card, a
 * comment; anything else (not JSON, larger than `maxBodyBytes`, a delete with no id, an undocumented shape)
 * is unplaced and kept with its text. The body is scrubbed of secrets by the listener already (raw bytes);
 * one whose decoded value may still spell one (JSON escapes) is kept as its value redacted, never as sent.
 */
export function placeDelivery(delivery: Pick<Delivery, 'receivedAt' | 'body'>, maxBodyBytes: number, secrets: readonly string[]): MirrorDelivery {
  return placeParsed(delivery, parseBody(delivery.body, maxBodyBytes, secrets), secrets);
}

/** As placeDelivery, for a body parseBody read already (CardStates reads it too: it is parsed once). */
function placeParsed(delivery: Pick<Delivery, 'receivedAt' | 'body'>, parsed: ParsedBody, secrets: readonly string[]): MirrorDelivery {
  const { receivedAt, body } = delivery;
  // The text of an unplaced body: as received (decoded as UTF-8; the record file keeps its bytes), or its
  // redacted value when the decoded body may show a secret.
  const text = () => (typeof parsed === 'object' && mayShowSecret(body, secrets) ? JSON.stringify(parsed.value) : body.toString('utf8'));
  if (typeof parsed !== 'object') return { kind: 'unplaced', receivedAt, body: text() };
  const read = readBody(parsed.value);
  const named = read.name === undefined ? {} : { name: read.name };
  switch (read.kind) {
    case 'card':
      return { kind: 'card', receivedAt, card: read.card as Card, ...named };
    case 'deleted':
      if (read.cardId !== undefined) return { kind: 'deleted', receivedAt, id: read.cardId, ...named };
      break;
    case 'comment':
      return { kind: 'comment', receivedAt, ...(read.cardId === undefined ? {} : { cardId: read.cardId }), ...named };
    case 'other':
      break;
  }
  return { kind: 'unplaced', receivedAt, ...named, ...(read.cardId === undefined ? {} : { cardId: read.cardId }), body: text() };
}

/**
 * The listener's hook into the mirror: one applyDeliveries per batch (durable when it returns; a throw
 * answers the batch 500 and the service sends it again, see DeliveryHook). Then each card the batch touched
 * that `states` does not remember is primed with what the mirror held before the batch, so its change line
 * (computed after this, when the listener reports the delivery) compares against the mirror: a restarted
 * listener, or a card last delivered a month ago, still shows `Status: Open → Done`.
 */
export class MirrorHook implements DeliveryHook {
  readonly counts: MirrorCounts = { applied: 0, unplaced: 0 };
  /** Each delivery's body as apply parsed it, until the listener reads its change (take). */
  private readonly parsed = new WeakMap<Delivery, ParsedBody>();

  constructor(
    private readonly store: MirrorStore,
    private readonly states: CardStates,
    private readonly secrets: readonly string[],
  ) {}

  apply(deliveries: readonly Delivery[]): void {
    const batch = deliveries.map((d) => {
      const parsed = this.states.parse(d.body);
      this.parsed.set(d, parsed);
      return placeParsed(d, parsed, this.secrets);
    });
    const changes = this.store.applyDeliveries(batch);
    for (const placed of batch) {
      if (placed.kind === 'unplaced') this.counts.unplaced++;
      else this.counts.applied++;
    }
    this.prime(batch, changes);
  }

  /** The body of `delivery` as apply parsed it (once: a second call has none), for its change line. */
  take(delivery: Delivery): ParsedBody | undefined {
    const parsed = this.parsed.get(delivery);
    this.parsed.delete(delivery);
    return parsed;
  }

  /**
   * A card's first change in the batch holds its state before the batch (`before`; none for a card new to
   * the mirror). A card delivered but left unchanged has no change: what the mirror holds now is what it
   * held before. The deliveries are applied and about to be answered 200 by then: a failure to read is
   * only a change line shown against less, never a reason to refuse them.
   */
  private prime(batch: readonly MirrorDelivery[], changes: readonly MirrorChange[]): void {
    const seen = new Set<string>();
    for (const change of changes) {
      if (seen.has(change.id)) continue;
      seen.add(change.id);
      if (change.before) this.states.prime(change.id, change.before);
    }
    for (const placed of batch) {
      if (placed.kind !== 'card') continue;
      const id = placed.card._id;
      if (seen.has(id) || this.states.has(id)) continue;
      seen.add(id);
      let kept: Card | undefined;
      try {
        kept = this.store.card(id);
      } catch {
        continue;
      }
      if (kept) this.states.prime(id, kept);
    }
  }
}
