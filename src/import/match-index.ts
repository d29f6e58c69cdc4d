// --match-on: the board's cards read once into key → `_id` + a digest of the fields this run sends
// (so an unchanged row need not be sent), and the page checks of a whole-board read. The spec gives no search
// endpoint, so every read walks all pages (spec 4.5).
import { hash } from 'node:crypto';
import { SeenIds } from '../api/seen-ids.js';
import type { Api, PagesRead } from '../api/types.js';
import { ownValue } from '../own-keys.js';
import type { Card } from '../spec-types.js';
import { CardTable, DIGEST_BYTES } from './card-table.js';

/**
 * Key value → `_id` and the digest of the mapped fields (8 bytes: 1 in 2^64 that two bodies collide), in
 * a Buffer-backed table (card-table.ts): no object or string per card keeps a 1,000,000-card board within
 * the memory goal. Keys held by more than one card are listed apart (a row cannot pick one).
 */
export interface KeyIndex {
  field: string;
  /** The fields digested: those this run's mapping sends, `_id` excluded, sorted. */
  fields: readonly string[];
  table: CardTable;
  ambiguous: Map<string, AmbiguousKey>;
  /** Cards read (a card seen twice under its key counts once). */
  cards: number;
  /** Where the cards came from. */
  from: IndexSource;
}

/** A key held by several cards: how many, and the first few `_id`s (to name in the row's rejection). */
interface AmbiguousKey {
  ids: string[];
  count: number;
}

/** `_id`s an ambiguous key keeps to show: a key shared by half the board must not hold half its ids. */
const SHOWN_IDS = 5;

/** A key as the index holds it: strings as they are, other values as JSON; none for empty values. */
export function keyText(v: unknown): string | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/** The key of a card: its own value only (a field named `constructor` is not Object's). */
export function cardKey(card: Card, field: string): string | undefined {
  return keyText(ownValue(card, field));
}

/** JSON with object keys sorted at every depth: equal values give equal text, and 3 differs from "3". */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item === undefined ? null : item)).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const members = value as Record<string, unknown>;
    const parts = Object.keys(members)
      .filter((k) => members[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(members[k])}`);
    return `{${parts.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * The digest of `fields` of a card or a body; absent fields are part of it (absent differs from ""). Own values
 * only: a card parsed from JSON inherits `constructor` and `toString`, which a body without them must not differ by.
 */
export function digestOf(values: Readonly<Record<string, unknown>>, fields: readonly string[]): string {
  let text = '';
  for (const f of fields) {
    const v = ownValue(values, f);
    text += v === undefined ? `${JSON.stringify(f)}!\n` : `${JSON.stringify(f)}=${canonicalJson(v)}\n`;
  }
  // One-shot hash of the whole text: the same digest as hashing it line by line, and no Hash object per card.
  // As a latin1 string, not a Buffer: no native allocation per card (see CardTable's hash).
  return hash('sha1', text, 'binary').slice(0, DIGEST_BYTES);
}

/** The card a key names: its `_id` and the digest of its mapped fields (none for an ambiguous key). */
export function lookupCard(index: KeyIndex, key: string): { id: string; digest: string } | undefined {
  return index.table.get(key) ?? undefined;
}

/** Tries of one page read: reads cannot duplicate, and a whole-board scan should outlast a bad minute. */
const PAGE_TRIES = 8;

/**
 * Read every page until the first empty one (spec 4.5) and call `each` for every card; `each` returning
 * true ends the read. The page walk (api cardPages) stops a server that repeats its pages, and tells
 * `onPage` of each page read (progress while a large board is read).
 */
export async function scanCards(
  api: Api,
  each: (card: Card) => boolean | undefined,
  signal?: AbortSignal,
  onPage?: (read: PagesRead) => void,
  seen?: (card: Card) => boolean,
): Promise<void> {
  // The client's retry policy (failure.ts) and rate gate apply to each page, as to every GET.
  for await (const cards of api.cardPages({ signal, maxTries: PAGE_TRIES, onPage, seen })) {
    for (const card of cards) if (each(card) === true) return;
  }
}

/** Where a key index came from: this run's read of every page, or a board's mirror fresh enough to stand for it. */
export type IndexSource =
  | { kind: 'pages'; pages: number }
  | { kind: 'mirror'; location: string; ageMs?: number; reason: string };

/**
 * The one builder of a key index, whatever the cards come from (pages or a mirror): cards are added one by one,
 * keys held by several cards are set apart (a row cannot pick one), a card seen twice counts once.
 */
class KeyIndexBuilder {
  readonly index: KeyIndex;
  /**
   * Whether a card was added before, for the page walk's repeated-page check: the table holds every card of a
   * unique key already (a second set of every id would add to the peak); cards without a key, or of a key
   * several cards hold, are kept apart (8-byte fingerprints, no list to search per card).
   */
  private readonly apart = new SeenIds();

  constructor(field: string, fields: readonly string[], from: IndexSource) {
    const sorted = [...new Set(fields)].filter((f) => f !== '_id').sort();
    this.index = { field, fields: sorted, table: new CardTable(), ambiguous: new Map(), cards: 0, from };
  }

  /** Whether `card` was added before (by its key and `_id`). */
  seen(card: Card): boolean {
    const { index } = this;
    const key = cardKey(card, index.field);
    if (key === undefined || index.ambiguous.has(key)) return this.apart.has(card._id);
    return index.table.holds(key, card._id);
  }

  /** Add one card: under its key with the digest of its mapped fields, or to the key's ambiguous list. */
  add(card: Card): void {
    const { index, apart } = this;
    const key = cardKey(card, index.field);
    if (key === undefined) {
      if (!apart.add(card._id)) index.cards++;
      return;
    }
    const id = card._id;
    const many = index.ambiguous.get(key);
    if (many) {
      // A card seen twice (the pages shifted under the read) is still one card.
      if (!apart.add(id)) {
        many.count++;
        if (many.ids.length < SHOWN_IDS) many.ids.push(id);
        index.cards++;
      }
      return;
    }
    const added = index.table.add(key, id, digestOf(card, index.fields));
    // Seen twice: one card, and its later view (its digest now kept) is the newer one.
    if (added === 'same') return;
    if (added === 'taken') {
      const firstId = index.table.get(key)!.id;
      index.ambiguous.set(key, { ids: [firstId, id], count: 2 });
      apart.add(firstId);
      apart.add(id);
      index.table.markAmbiguous(key);
    }
    index.cards++;
  }
}

/** The key index of cards already at hand (a mirror's), over the mapped `fields`. */
export function indexCards(cards: Iterable<Card>, field: string, fields: readonly string[], from: IndexSource): KeyIndex {
  const builder = new KeyIndexBuilder(field, fields, from);
  for (const card of cards) builder.add(card);
  return builder.index;
}

/** Build the key → `_id` + digest index of the whole board from its pages, over the mapped `fields`. */
export async function loadKeyIndex(api: Api, field: string, fields: readonly string[], signal?: AbortSignal, onPage?: (read: PagesRead) => void): Promise<KeyIndex> {
  const from: IndexSource = { kind: 'pages', pages: 0 };
  const builder = new KeyIndexBuilder(field, fields, from);
  const pageRead = (read: PagesRead): void => {
    from.pages = read.pages;
    onPage?.(read);
  };
  await scanCards(api, (card) => void builder.add(card), signal, pageRead, (card) => builder.seen(card));
  return builder.index;
}
