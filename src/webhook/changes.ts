import { isDeepStrictEqual } from 'node:util';
import { emptyRecord, fieldRecord } from '../own-keys.js';
import { redactValue } from '../redact.js';
import { mayShowSecret } from './delivery.js';

// What a delivery did to a card. The spec does not show webhook bodies (spec 6), and the service also sends
// them for deletes, comments and uploads. What is read of a body, in order:
// - a JSON object with a string `_id` is a card (spec 2.2): its other keys are field names, so none of them
//   is read as an event name (a board may well have a field called `type` or `event`); only `deleted` or
//   `isDeleted` set to true marks it deleted;
// - otherwise the event's name is the first string of `event`, `eventType`, `type` or `action`, and what it
//   is about is the object under `card`, `data`, `payload` or `object` (else the body itself): a name with
//   "delete" or "remove" is a delete, one with "comment" a comment, and a subject with an `_id` a card;
// - a subject shaped like a comment (spec 2.1: `content` with `userId` or `userName`, no `_id`) is a comment;
// - anything else is shown as it came (`other`).
// A field missing from a card's body is taken as not sent, not as cleared: a server may send only what
// changed, so the card keeps its last value for it.

/** One field's change: `before` is absent for a field not seen before, `after` for one deleted with its card. */
interface FieldChange {
  field: string;
  before?: unknown;
  after?: unknown;
}

/**
 * What a delivery was, as far as its body tells:
 * - `new`: a card not seen before (in this run, or since it was dropped from memory); `changes` lists its fields;
 * - `changed` / `unchanged`: a card seen before; `changes` lists the fields whose value differs;
 * - `deleted`: a card deleted (`changes` empty); `comment`: a comment on a card;
 * - `other`: not a card (an array, text, an upload…), or too large to read (`unread`).
 */
type ChangeEvent = 'new' | 'changed' | 'unchanged' | 'deleted' | 'comment' | 'other';

export interface DeliveryChange {
  event: ChangeEvent;
  /** The card's `_id`, when the body names one. */
  cardId?: string;
  /**
   * A card's name as a reader would call it: the value of its first field (in the body's key order, `_id`
   * and other keys starting with `_` skipped) that is a non-empty string. Read from the card's state as
   * remembered (the body's fields over the ones before, as redacted), so a partial body keeps the name.
   */
  cardName?: string;
  /** The event's name as the body gives it (`card.deleted`, `upload`…), when it gives one. */
  name?: string;
  changes: FieldChange[];
  /** For `comment`: its text and author, when the body has them. */
  comment?: { content?: string; author?: string };
  /** The body was not read: larger than the bound (see CardStatesOptions.maxBodyBytes). */
  unread?: true;
}

interface CardStatesOptions {
  /** Cards remembered at most; the least recently seen is dropped first (default 10,000). */
  maxCards?: number;
  /** Bytes of card bodies remembered at most, counted as their size on the wire (default 16 MiB). */
  maxBytes?: number;
  /** Bodies larger than this are not parsed (default 1 MiB). */
  maxBodyBytes?: number;
  /**
   * Secrets no change may show: a body whose decoded value holds one (spelled with JSON escapes, which the
   * raw-bytes scrub of the listener cannot see) is read with each replaced by `***`, keys included.
   */
  secrets?: readonly string[];
}

const DEFAULT_MAX_CARDS = 10_000;
const DEFAULT_MAX_BYTES = 16 * 1024 * 1024;
const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

const EVENT_KEYS = ['event', 'eventType', 'type', 'action'] as const;
const SUBJECT_KEYS = ['card', 'data', 'payload', 'object'] as const;
const CARD_ID_KEYS = ['cardId', 'card_id'] as const;
const DELETE_NAME = /delet|remov/i;
const COMMENT_NAME = /comment/i;

interface CardState {
  fields: Record<string, unknown>;
  bytes: number;
}

type Json = Record<string, unknown>;

/** Equal JSON values; most field values are strings or numbers, compared without a call. */
function sameValue(a: unknown, b: unknown): boolean {
  return a === b || (typeof a === 'object' && a !== null && typeof b === 'object' && b !== null && isDeepStrictEqual(a, b));
}

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function ownString(json: Json, key: string): string | undefined {
  const v = Object.hasOwn(json, key) ? json[key] : undefined;
  return typeof v === 'string' ? v : undefined;
}

function firstString(json: Json, keys: readonly string[]): string | undefined {
  for (const k of keys) {
    const v = ownString(json, k);
    if (v !== undefined) return v;
  }
  return undefined;
}

/**
 * A body's event name and what it is about (see the top of this file): a card with an `_id` is its own
 * subject and has no name; otherwise the name is the first string of EVENT_KEYS and the subject the
 * first object under SUBJECT_KEYS, else the body.
 */
function eventParts(value: Json): { subject: Json; name?: string } {
  if (ownString(value, '_id') !== undefined) return { subject: value };
  const name = firstString(value, EVENT_KEYS);
  for (const k of SUBJECT_KEYS) {
    const inner = Object.hasOwn(value, k) ? value[k] : undefined;
    if (isObject(inner)) return { subject: inner, name };
  }
  return { subject: value, name };
}

/** The card a parsed body holds, as CardStates reads it: the body, or the object with an `_id` that it wraps. */
export function cardIn(value: unknown): Record<string, unknown> | undefined {
  if (!isObject(value)) return undefined;
  const { subject } = eventParts(value);
  return ownString(subject, '_id') !== undefined ? subject : value;
}

/** A card's name (DeliveryChange.cardName): its first field, `_`-keys skipped, whose value is a non-empty string. */
function nameOf(card: Json): string | undefined {
  for (const key of Object.keys(card)) {
    if (key.startsWith('_')) continue;
    const v = card[key];
    if (typeof v === 'string' && v !== '') return v;
  }
  return undefined;
}

function isCommentShape(json: Json): boolean {
  return ownString(json, 'content') !== undefined && (ownString(json, 'userId') !== undefined || ownString(json, 'userName') !== undefined);
}

/** A body as parseBody read it. */
export type ParsedBody = { value: unknown } | 'unread' | 'not-json';

/**
 * A delivery's body, parsed as every reader of deliveries parses it: 'unread' when larger than `maxBodyBytes`,
 * 'not-json' when it is not JSON; a body whose decoded value may hold a secret (JSON escapes the raw-bytes
 * scrub cannot see) has each secret replaced by `***`, keys included.
 */
export function parseBody(body: Buffer, maxBodyBytes: number, secrets: readonly string[]): ParsedBody {
  if (body.length > maxBodyBytes) return 'unread';
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    return 'not-json';
  }
  return { value: mayShowSecret(body, secrets) ? redactValue(secrets, value) : value };
}

/** What a parsed body is, as read at the top of this file: the one reading of CardStates and of the mirror. */
export type BodyReading =
  | { kind: 'card'; cardId: string; card: Json; name?: string }
  | { kind: 'deleted'; cardId?: string; name?: string }
  | { kind: 'comment'; cardId?: string; name?: string; comment: { content?: string; author?: string } }
  | { kind: 'other'; cardId?: string; name?: string };

/** Read a parsed body (see the top of this file). */
export function readBody(value: unknown): BodyReading {
  if (!isObject(value)) return { kind: 'other' };
  const { subject, name } = eventParts(value);
  const cardId = ownString(subject, '_id') ?? firstString(subject, CARD_ID_KEYS) ?? firstString(value, CARD_ID_KEYS);
  const named = name === undefined ? {} : { name };
  const withId = cardId === undefined ? {} : { cardId };
  if ((name !== undefined && DELETE_NAME.test(name)) || subject.deleted === true || subject.isDeleted === true) return { kind: 'deleted', ...withId, ...named };
  const subjectId = ownString(subject, '_id');
  if ((name !== undefined && COMMENT_NAME.test(name)) || (subjectId === undefined && isCommentShape(subject))) {
    const content = ownString(subject, 'content');
    const author = ownString(subject, 'userName') ?? ownString(subject, 'userId');
    const comment = { ...(content === undefined ? {} : { content }), ...(author === undefined ? {} : { author }) };
    return { kind: 'comment', ...withId, ...named, comment };
  }
  if (subjectId === undefined) return { kind: 'other', ...withId, ...named };
  return { kind: 'card', cardId: subjectId, card: subject, ...named };
}

/**
 * The last delivered state of each card, by `_id`, in bounded memory (a Map kept in least-recently-seen
 * order), and each delivery turned into what it changed. One instance per stream of deliveries, fed in
 * their order: `webhook listen` (live and the record it resumes), `webhook replay --changed`, the inspector.
 */
export class CardStates {
  private readonly cards = new Map<string, CardState>();
  private bytes = 0;
  private readonly maxCards: number;
  private readonly maxBytes: number;
  readonly maxBodyBytes: number;
  private readonly secrets: readonly string[];

  constructor(opts: CardStatesOptions = {}) {
    this.maxCards = Math.max(1, opts.maxCards ?? DEFAULT_MAX_CARDS);
    this.maxBytes = Math.max(1, opts.maxBytes ?? DEFAULT_MAX_BYTES);
    this.maxBodyBytes = opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
    this.secrets = opts.secrets ?? [];
  }

  /** Cards remembered now. */
  get size(): number {
    return this.cards.size;
  }

  /** The remembered fields of a card (a copy), or undefined. */
  get(cardId: string): Record<string, unknown> | undefined {
    const s = this.cards.get(cardId);
    return s ? Object.assign(emptyRecord(), s.fields) : undefined;
  }

  /** What this body did, and remember the card's new state. */
  apply(body: Buffer): DeliveryChange {
    return this.applyParsed(this.parse(body), body.length);
  }

  /** `body` parsed as apply parses it (with this instance's limit and secrets), for a caller that reads it too. */
  parse(body: Buffer): ParsedBody {
    return parseBody(body, this.maxBodyBytes, this.secrets);
  }

  /** As apply, for a body parse() read already; `bytes` is its size on the wire. */
  applyParsed(parsed: ParsedBody, bytes: number): DeliveryChange {
    if (parsed === 'unread') return { event: 'other', changes: [], unread: true };
    if (parsed === 'not-json') return { event: 'other', changes: [] };
    return this.applyValue(parsed.value, bytes);
  }

  /** As apply, for a body already parsed; `bytes` is its size on the wire. */
  applyValue(value: unknown, bytes: number): DeliveryChange {
    const read = readBody(value);
    const named = read.name === undefined ? {} : { name: read.name };
    const withId = read.cardId === undefined ? {} : { cardId: read.cardId };
    switch (read.kind) {
      case 'deleted':
        if (read.cardId !== undefined) this.forget(read.cardId);
        return { event: 'deleted', ...withId, ...named, changes: [] };
      case 'comment':
        return { event: 'comment', ...withId, ...named, changes: [], comment: read.comment };
      case 'other':
        return { event: 'other', ...withId, ...named, changes: [] };
      case 'card':
        return { ...this.diff(read.cardId, read.card, bytes), ...named };
    }
  }

  /**
   * Remember `fields` as the card's last state, only if the card is not remembered already: what another
   * source (the mirror) knew of it before this run's deliveries, so the next one is shown against it.
   */
  prime(cardId: string, fields: Readonly<Record<string, unknown>>): void {
    if (this.cards.has(cardId)) return;
    const state = fieldRecord();
    for (const field of Object.keys(fields)) if (field !== '_id') state[field] = fields[field];
    this.remember(cardId, { fields: state, bytes: Buffer.byteLength(JSON.stringify(state)) });
  }

  /** Whether the card's state is remembered. */
  has(cardId: string): boolean {
    return this.cards.has(cardId);
  }

  private diff(cardId: string, card: Json, bytes: number): DeliveryChange {
    const before = this.cards.get(cardId);
    // The state is this object's own: updated in place, so a delivery that changes nothing allocates nothing.
    const fields = before?.fields ?? fieldRecord();
    const changes: FieldChange[] = [];
    for (const field of Object.keys(card)) {
      if (field === '_id') continue;
      const after = card[field];
      if (before === undefined || !Object.hasOwn(fields, field)) changes.push({ field, after });
      else {
        const was = fields[field];
        if (!sameValue(was, after)) changes.push({ field, before: was, after });
      }
      fields[field] = after;
    }
    this.remember(cardId, { fields, bytes: Math.max(bytes, before?.bytes ?? 0) });
    // Named from the state, in the order its fields were first seen: a body holding only what changed
    // (spec 6 does not say a delivery is the whole card) still names the card as its full body did.
    const cardName = nameOf(fields);
    return { event: before === undefined ? 'new' : changes.length ? 'changed' : 'unchanged', cardId, ...(cardName === undefined ? {} : { cardName }), changes };
  }

  private forget(cardId: string): void {
    const state = this.cards.get(cardId);
    if (!state) return;
    this.cards.delete(cardId);
    this.bytes -= state.bytes;
  }

  private remember(cardId: string, state: CardState): void {
    this.forget(cardId);
    this.cards.set(cardId, state);
    this.bytes += state.bytes;
    // Least recently seen first: a Map iterates in insertion order, and each card seen is inserted anew.
    for (const [id, state] of this.cards) {
      if (this.cards.size <= this.maxCards && this.bytes <= this.maxBytes) break;
      if (id === cardId) break;
      this.cards.delete(id);
      this.bytes -= state.bytes;
    }
  }
}
