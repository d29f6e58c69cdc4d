// --match-on: the board's cards read once into key → `_id` (issue 4, section 3), and the re-check of one
// key after an uncertain failure. The spec gives no search endpoint, so both read every page (spec 4.5).
import type { Api } from '../api/types.js';
import type { Card } from '../spec-types.js';

/** Key value → card `_id`; keys held by more than one card are listed apart (a row cannot pick one). */
export interface KeyIndex {
  field: string;
  ids: Map<string, string>;
  ambiguous: Map<string, string[]>;
  cards: number;
}

/** The key of a card as the CSV would write it: strings as they are, other values as JSON. */
export function cardKey(card: Card, field: string): string | undefined {
  const v = card[field];
  if (v === undefined || v === null || v === '') return undefined;
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/** Tries of one page read: reads cannot duplicate, and a whole-board scan should outlast a bad minute. */
const PAGE_TRIES = 8;

/** Read every page until the first empty one (spec 4.5) and call `each` for every card. */
export async function scanCards(api: Api, each: (card: Card) => boolean | undefined, signal?: AbortSignal): Promise<void> {
  // The client's retry policy (failure.ts) and rate gate apply to each page, as to every GET.
  for await (const cards of api.cardPages({ signal, maxTries: PAGE_TRIES })) {
    for (const card of cards) if (each(card) === true) return;
  }
}

/** Build the key → `_id` index of the whole board. */
export async function loadKeyIndex(api: Api, field: string, signal?: AbortSignal): Promise<KeyIndex> {
  const index: KeyIndex = { field, ids: new Map(), ambiguous: new Map(), cards: 0 };
  await scanCards(
    api,
    (card) => {
      index.cards++;
      const key = cardKey(card, field);
      if (key === undefined) return;
      const many = index.ambiguous.get(key);
      if (many) many.push(card._id);
      else if (index.ids.has(key)) {
        index.ambiguous.set(key, [index.ids.get(key)!, card._id]);
        index.ids.delete(key);
      } else index.ids.set(key, card._id);
      return undefined;
    },
    signal,
  );
  return index;
}

/** After an uncertain failure: is a card with this key on the board now? Its `_id`, or undefined. */
export async function findByKey(api: Api, field: string, key: string, signal?: AbortSignal): Promise<string | undefined> {
  let found: string | undefined;
  await scanCards(
    api,
    (card) => {
      if (cardKey(card, field) !== key) return undefined;
      found = card._id;
      return true;
    },
    signal,
  );
  return found;
}
