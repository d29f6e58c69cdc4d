// The filters of `webhook listen` (--changed, --where) and the routes of --forward-to: which deliveries are
// printed and which go to which URL. Every delivery is still answered, recorded, applied to the mirror and
// shown in the inspector; filters only choose what is printed and forwarded.
//
// A delivery matches a filter when it matches every --where of it and, if the filter has --changed fields,
// changed at least one of them. Both need a card: a delivery that is a card (new, changed or unchanged)
// can match; a delete, a comment or any other body matches no --changed and no --where. A new card counts
// as changing each field its body has. --where reads the card's fields after the delivery: the body's,
// and for a field the body leaves out (a server may send only what changed), the card's last state.
import { createHash } from 'node:crypto';
import { terminalText } from '../io/text.js';
import { whereFilter, type WhereTerm } from '../schema/where.js';
import type { Card } from '../spec-types.js';
import { CardStates, type DeliveryChange } from './changes.js';
import type { Delivery } from './delivery.js';
import { cursorPath } from './forwarder.js';

/** One group of filters: all its --where must hold, and one of its --changed fields (if any) must have changed. */
export interface FilterSpec {
  where: WhereTerm[];
  changed: string[];
}

/** A --forward-to URL and the filters given after it. */
export interface RouteSpec {
  url: string;
  filter: FilterSpec;
}

/** The filters given before any --forward-to (they choose what is printed and narrow every route), and the routes. */
export interface Routing {
  global: FilterSpec;
  routes: RouteSpec[];
}

/** A delivery's decision: whether it is printed, and the URLs of the routes that take it. */
export interface RouteDecision {
  printed: boolean;
  routes: string[];
}

function hasFilter(f: FilterSpec): boolean {
  return f.where.length > 0 || f.changed.length > 0;
}

/** Whether any filter is given, globally or on a route. */
export function hasFilters(r: Routing): boolean {
  return hasFilter(r.global) || r.routes.some((route) => hasFilter(route.filter));
}

/** A filter as the flags that make it: `--where 'Status=Done' --changed Owner`. */
export function filterText(f: FilterSpec): string {
  return [...f.where.map((t) => `--where ${quoteArg(t.expr)}`), ...f.changed.map((c) => `--changed ${quoteArg(c)}`)].join(' ');
}

/** A value as a shell word a person could paste: plain when safe, else single-quoted. */
function quoteArg(value: string): string {
  return terminalText(/^[\w.,:/@%+=-]+$/.test(value) ? value : `'${value.replaceAll("'", `'\\''`)}'`);
}

/**
 * The ack log of route `index` of a record file. One --forward-to without any filter keeps
 * `<record>.forwarded`, as before routes existed; any other route has its own, named after a hash of its URL
 * and of every filter that narrows it (a route whose URL or filters change starts a new log, and, like
 * --forward-to on a record file made without it, forwards what arrives from then on).
 */
export function routeCursorPath(recordPath: string, routing: Routing, index: number): string {
  if (routing.routes.length === 1 && !hasFilters(routing)) return cursorPath(recordPath);
  const route = routing.routes[index]!;
  const key = (f: FilterSpec) => ({ where: f.where.map((t) => t.expr).sort(), changed: [...new Set(f.changed)].sort() });
  const hash = createHash('sha256')
    .update(JSON.stringify({ url: route.url, global: key(routing.global), route: key(route.filter) }))
    .digest('hex')
    .slice(0, 12);
  return `${cursorPath(recordPath)}-${hash}`;
}

/** A filter made ready to test deliveries. */
class Filter {
  private readonly changed: ReadonlySet<string>;
  private readonly where: ((card: Card) => boolean) | undefined;

  constructor(spec: FilterSpec) {
    this.changed = new Set(spec.changed);
    this.where = spec.where.length > 0 ? whereFilter(spec.where) : undefined;
  }

  matches(change: DeliveryChange, card: Card | undefined): boolean {
    if (this.changed.size > 0 && !change.changes.some((c) => this.changed.has(c.field))) return false;
    return this.where === undefined || (card !== undefined && this.where(card));
  }
}

/**
 * A yes/no per sequence number, from the first one set on: two bits a delivery (known, taken), so a run of
 * millions of deliveries keeps its decisions in a few megabytes.
 */
class SeqBits {
  private base = -1;
  private known = new Uint8Array(0);
  private yes = new Uint8Array(0);

  set(seq: number, value: boolean): void {
    if (this.base < 0) this.base = seq;
    const i = seq - this.base;
    if (i < 0) return;
    if (i >> 3 >= this.known.length) {
      const size = Math.max(64, this.known.length * 2, (i >> 3) + 1);
      const grow = (old: Uint8Array) => {
        const next = new Uint8Array(size);
        next.set(old);
        return next;
      };
      this.known = grow(this.known);
      this.yes = grow(this.yes);
    }
    const bit = 1 << (i & 7);
    this.known[i >> 3]! |= bit;
    if (value) this.yes[i >> 3]! |= bit;
    else this.yes[i >> 3]! &= ~bit;
  }

  get(seq: number): boolean | undefined {
    const i = seq - this.base;
    if (this.base < 0 || i < 0 || i >> 3 >= this.known.length) return undefined;
    const bit = 1 << (i & 7);
    return (this.known[i >> 3]! & bit) === 0 ? undefined : (this.yes[i >> 3]! & bit) !== 0;
  }
}

const isCardEvent = (change: DeliveryChange) => change.event === 'new' || change.event === 'changed' || change.event === 'unchanged';

interface RouterOptions {
  /** Secrets a body is read without (as CardStates reads it). */
  secrets: readonly string[];
  /**
   * Told once per filter field when a delivery's card has a field that differs from it only by case (the
   * filter then never matches it); undefined when the names were checked against the board's schema.
   */
  warn?: (message: string) => void;
}

/**
 * Decides, delivery by delivery in arrival order, what is printed and which routes take it, and keeps each
 * route's decisions by sequence number: a forwarder that reads a delivery back from the record file (a
 * spill, a resumed run) gets the decision made when it arrived, not one against the card states of later.
 * A restarted run makes them again from the record file's history (readHistory), in the same order.
 */
export class Router {
  private readonly global: Filter;
  private readonly filters: Filter[];
  private readonly decisions: SeqBits[];
  private readonly urls: string[];
  /** Whether some filter reads the card's fields (a --where, or the case check). */
  private readonly needsCard: boolean;
  /** Field names of the filters, for the case check. */
  private readonly fields: string[];
  private readonly warned = new Set<string>();

  constructor(
    routing: Routing,
    private readonly opts: RouterOptions,
  ) {
    this.global = new Filter(routing.global);
    this.filters = routing.routes.map((r) => new Filter(r.filter));
    this.decisions = routing.routes.map(() => new SeqBits());
    this.urls = routing.routes.map((r) => r.url);
    const specs = [routing.global, ...routing.routes.map((r) => r.filter)];
    this.fields = [...new Set(specs.flatMap((f) => [...f.where.map((t) => t.field), ...f.changed]))].filter((f) => f !== '_id');
    this.needsCard = opts.warn !== undefined || specs.some((f) => f.where.length > 0);
  }

  /**
   * The decision for a delivery whose change `states` just applied (it holds the card's state after it);
   * `live` false for one read from the record file's history, which is not checked for a field's case.
   */
  decide(delivery: Delivery, change: DeliveryChange, states: CardStates, live = true): RouteDecision {
    const card = this.needsCard && isCardEvent(change) ? cardAfter(states, change.cardId!) : undefined;
    if (card && live && this.opts.warn) this.checkCase(card);
    const inGlobal = this.global.matches(change, card);
    const routes: string[] = [];
    for (let i = 0; i < this.filters.length; i++) {
      const takes = inGlobal && this.filters[i]!.matches(change, card);
      this.decisions[i]!.set(delivery.seq, takes);
      if (takes) routes.push(this.urls[i]!);
    }
    return { printed: inGlobal && (this.filters.length === 0 || routes.length > 0), routes };
  }

  /**
   * Whether route `index` takes a delivery. One that arrived before the history this run read (a record file
   * larger than what it reads at start) is decided on its body alone, its card counted as new.
   */
  takes(index: number, delivery: Delivery): boolean {
    const known = this.decisions[index]!.get(delivery.seq);
    if (known !== undefined) return known;
    const states = new CardStates({ maxCards: 1, secrets: this.opts.secrets });
    const change = states.apply(delivery.body);
    const card = isCardEvent(change) ? cardAfter(states, change.cardId!) : undefined;
    return this.global.matches(change, card) && this.filters[index]!.matches(change, card);
  }

  /** How many of the deliveries after `afterSeq` up to `lastSeq` route `index` takes (one not decided counts as taken). */
  taken(index: number, afterSeq: number, lastSeq: number): number {
    let n = 0;
    for (let seq = afterSeq + 1; seq <= lastSeq; seq++) if (this.decisions[index]!.get(seq) !== false) n++;
    return n;
  }

  /** Warn once per filter field that a card has only in another case (field names are exact, spec 2.2). */
  private checkCase(card: Card): void {
    for (const field of this.fields) {
      if (this.warned.has(field) || Object.hasOwn(card, field)) continue;
      const lower = field.toLowerCase();
      const other = Object.keys(card).find((k) => k.toLowerCase() === lower);
      if (other === undefined) continue;
      this.warned.add(field);
      this.opts.warn!(terminalText(`a filter names the field '${field}' and card ${card._id} has '${other}': field names are case-sensitive, so it never matches that field; write '${other}'`));
    }
  }
}

/** The card as it stands after a delivery: its remembered fields (the body's, over what it left out) and `_id`. */
function cardAfter(states: CardStates, cardId: string): Card | undefined {
  const fields = states.get(cardId);
  return fields && Object.assign(fields, { _id: cardId });
}
