// --match-on: the board's cards read once into key → `_id` (issue 4, section 3), and the re-check of one
// key after an uncertain failure. The spec gives no search endpoint, so both read every page (spec 4.5).
import type { Api } from '../api/types.js';
import { ApiError } from '../errors.js';
import type { Card } from '../spec-types.js';
import type { Pacer } from './pacer.js';

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

const NOT_APPLIED = new Set(['ECONNREFUSED', 'UND_ERR_CONNECT_TIMEOUT', 'ECONNRESET', 'UND_ERR_SOCKET', 'UND_ERR_HEADERS_TIMEOUT']);

/** A GET through the pacer, retried on 429 (pausing every worker), 5xx and network failures: reads cannot duplicate. */
export async function pacedRead<T>(pacer: Pacer, read: () => Promise<T>, signal?: AbortSignal, tries = 8): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const sentAt = await pacer.acquire(signal);
    try {
      const result = await read();
      pacer.succeeded();
      return result;
    } catch (err) {
      if (!(err instanceof ApiError) || attempt >= tries || signal?.aborted) throw err;
      if (err.status === 429) pacer.throttled(sentAt, (err.retryAfter ?? 1) * 1000);
      else if (!(err.status === undefined ? NOT_APPLIED.has(err.code ?? '') : err.status >= 500)) throw err;
      else await new Promise((r) => setTimeout(r, Math.min(4000, err.retryAfter !== undefined ? err.retryAfter * 1000 : 100 * 2 ** attempt)));
    }
  }
}

/** Read every page until the first empty one (spec 4.5) and call `each` for every card. */
export async function scanCards(api: Api, pacer: Pacer, each: (card: Card) => boolean | undefined, signal?: AbortSignal): Promise<void> {
  for (let page = 0; ; page++) {
    const cards = await pacedRead(pacer, () => api.listCards(page, { noRetry: true, signal }), signal);
    if (cards.length === 0) return;
    for (const card of cards) if (each(card) === true) return;
  }
}

/** Build the key → `_id` index of the whole board. */
export async function loadKeyIndex(api: Api, pacer: Pacer, field: string, signal?: AbortSignal): Promise<KeyIndex> {
  const index: KeyIndex = { field, ids: new Map(), ambiguous: new Map(), cards: 0 };
  await scanCards(
    api,
    pacer,
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
export async function findByKey(api: Api, pacer: Pacer, field: string, key: string, signal?: AbortSignal): Promise<string | undefined> {
  let found: string | undefined;
  await scanCards(
    api,
    pacer,
    (card) => {
      if (cardKey(card, field) !== key) return undefined;
      found = card._id;
      return true;
    },
    signal,
  );
  return found;
}
