import { randomUUID } from 'node:crypto';
import type { Card, Comment, Field } from '../spec-types.js';
import type { BoardSettings, BoardState, WebhookStats } from './types.js';

/** The outcome of a create-or-update (spec 4.3). */
interface PutResult {
  card: Card;
  created: boolean;
}

/** One board's fields, cards (in creation order) and comments, with the rules of spec 4.3. */
export class BoardStore {
  readonly fields: Field[];
  readonly cards: Card[] = [];
  private readonly fieldNames: Set<string>;
  private readonly byId = new Map<string, Card>();
  private readonly comments = new Map<string, Comment[]>();

  constructor(
    readonly id: string,
    readonly settings: BoardSettings,
    private readonly newId: () => string,
  ) {
    this.fields = settings.fields.map((name) => ({ name, uuid: randomUUID() }));
    this.fieldNames = new Set(settings.fields);
  }

  /** Create or update a card from a posted object (spec 4.3 rules 1-4). */
  put(body: Record<string, unknown>): PutResult {
    let card: Card | undefined;
    // Rule 3: `Always Create New` ignores `_id`. Rule 4: `Update if exists` updates only a card it has.
    if (this.settings.updateMode === 'Update if exists' && typeof body._id === 'string') card = this.byId.get(body._id);
    const created = card === undefined;
    if (card === undefined) {
      // A fresh id even when an unknown `_id` was sent, so a client can see that a new card was made.
      // Null prototype: a field named "__proto__" must stay a plain key.
      card = Object.create(null) as Card;
      card._id = this.freshId();
      this.cards.push(card);
      this.byId.set(card._id, card);
    }
    for (const key of Object.keys(body)) {
      if (key === '_id') continue;
      if (!this.fieldNames.has(key)) {
        // Rule 1: exact, case-sensitive names; anything else is dropped. Rule 2: unless Create Fields is on.
        if (!this.settings.createFields) continue;
        this.fieldNames.add(key);
        this.fields.push({ name: key, uuid: randomUUID() });
      }
      card[key] = body[key];
    }
    return { card, created };
  }

  /** A new id no card of this board has (a clash is ~2^-98 likely, but two cards must never share one). */
  private freshId(): string {
    let id = this.newId();
    while (this.byId.has(id)) id = this.newId();
    return id;
  }

  /** The card with this `_id` (spec 4.4). */
  get(cardId: string): Card | undefined {
    return this.byId.get(cardId);
  }

  /** Zero-based page `page` of `size` cards; [] past the end (spec 4.5). */
  page(page: number, size: number): Card[] {
    return this.cards.slice(page * size, page * size + size);
  }

  /** Add a comment to one of this board's cards (spec 4.1, 2.1). */
  comment(cardId: string, content: string): Comment {
    const comment: Comment = {
      id: this.newId(),
      userId: 'emulator-api',
      content,
      seenByUsers: [],
      userName: 'API',
      createdAt: new Date().toISOString(),
    };
    const list = this.comments.get(cardId);
    if (list) list.push(comment);
    else this.comments.set(cardId, [comment]);
    return comment;
  }

  /** A deep copy of everything the board holds. */
  snapshot(webhooks: WebhookStats): BoardState {
    return structuredClone({
      fields: this.fields,
      cards: this.cards.map((c) => ({ ...c })),
      comments: Object.fromEntries(this.comments),
      webhooks,
    });
  }
}
