import type { DeliveryChange } from '../changes.js';
import { bodyValue, type Delivery, type DeliveryView, shownDelivery } from '../delivery.js';
import { answerView, type ForwardEntry } from '../forward-entry.js';
import type { ForwardEvent } from '../forwarder.js';
import { emptyRecord } from '../../own-keys.js';
import { redactValue, scrubSecret } from '../../redact.js';

/** Entries kept at most, and body bytes kept at most: past either, the oldest entry is dropped first. */
export const DEFAULT_MAX_ENTRIES = 1000;
export const DEFAULT_MAX_BYTES = 32 * 1024 * 1024;
/** Characters of a body's text sent with each entry of the list. */
const PREVIEW_CHARS = 4096;
/** Bytes of a body sent with its detail; the rest is cut (`bodyTruncated`). */
const DETAIL_BODY_BYTES = 1024 * 1024;

/**
 * The last try to forward a delivery, as the page shows it. The list (and the `forward` event) gets it
 * without the answer's headers and body; the detail whole, beside the request.
 */
interface ForwardView {
  url: string;
  attempt: number;
  ok: boolean;
  status: number | null;
  /** Milliseconds, rounded to 0.1. */
  ms: number;
  error?: string;
  /** The app's answer (detail only; absent when none came): its headers and the start of its body (ANSWER_BODY_BYTES). */
  headers?: Record<string, string>;
  body?: unknown;
  bodyTruncated?: true;
}

/** One delivery as the list receives it (event `entry`). */
interface EntryView {
  seq: number;
  receivedAt: string;
  method: string;
  path: string;
  size: number;
  verified: boolean;
  /** From the record file's history (before this run), not received live. */
  recorded: boolean;
  change: DeliveryChange;
  /** The card's name beside its id in the list (the change's `cardName`), when the body gives one. */
  cardName?: string;
  preview: string;
  forward?: ForwardView;
  /** The --forward-to URLs this delivery goes to; absent when the run forwards nothing, [] when every route's filters left it out. */
  routes?: string[];
}

/** One delivery with its headers and body (GET deliveries/<seq>). */
interface DetailView extends DeliveryView {
  bodyTruncated?: true;
  size: number;
  change: DeliveryChange;
  forward?: ForwardView;
}

interface Entry {
  /** As received and recorded: what a replay sends. */
  delivery: Delivery;
  /** As the page shows it: the body decoded with the secrets redacted (the same object when none shows). */
  shown: Delivery;
  change: DeliveryChange;
  recorded: boolean;
  /** The last forward try, with the app's answer. */
  forward?: ForwardView;
  routes?: string[];
}

/** A forward view as the list and the `forward` event carry it: without the answer's headers and body. */
function listForward(view: ForwardView): ForwardView {
  const { headers: _headers, body: _body, bodyTruncated: _cut, ...small } = view;
  return small;
}

/** A forward event as the page's list shows it (event `forward`), ms rounded to 0.1. */
export function forwardView(event: ForwardEvent): ForwardView {
  const v: ForwardView = { url: event.url, attempt: event.attempt, ok: event.ok, status: event.answer.status ?? null, ms: Math.round(event.answer.ms * 10) / 10 };
  if (event.answer.error !== undefined) v.error = event.answer.error;
  return v;
}

/** What a lookup by seq found: the delivery, one dropped to stay in bounds, or none ever kept. */
type Lookup = { kind: 'kept'; delivery: Delivery } | { kind: 'dropped' } | { kind: 'unknown' };

/**
 * The deliveries the inspector shows, in arrival order, in bounded memory: at most `maxEntries` and
 * `maxBytes` of bodies; the oldest goes first (the newest one is always kept, however large).
 */
export class EntryStore {
  private readonly entries = new Map<number, Entry>();
  private bytes = 0;
  /** Entries dropped so far, and the highest seq among them: a seq at or below it and not kept was dropped. */
  dropped = 0;
  private droppedUpTo = 0;

  constructor(
    private readonly verified: boolean,
    private readonly maxEntries = DEFAULT_MAX_ENTRIES,
    private readonly maxBytes = DEFAULT_MAX_BYTES,
    private readonly secrets: readonly string[] = [],
  ) {}

  get size(): number {
    return this.entries.size;
  }

  /** Body bytes kept now. */
  get keptBytes(): number {
    return this.bytes;
  }

  /** Keep a delivery (a seq seen again replaces its entry). */
  add(delivery: Delivery, change: DeliveryChange, recorded: boolean, routes?: string[]): void {
    const old = this.entries.get(delivery.seq);
    if (old) {
      this.entries.delete(delivery.seq);
      this.bytes -= old.delivery.body.length;
    }
    const entry: Entry = { delivery, shown: shownDelivery(delivery, this.secrets), change, recorded };
    if (routes) entry.routes = routes;
    this.entries.set(delivery.seq, entry);
    this.bytes += delivery.body.length;
    for (const [seq, oldest] of this.entries) {
      if (this.entries.size <= this.maxEntries && this.bytes <= this.maxBytes) break;
      if (seq === delivery.seq) break;
      this.entries.delete(seq);
      this.bytes -= oldest.delivery.body.length;
      this.dropped++;
      this.droppedUpTo = Math.max(this.droppedUpTo, seq);
    }
  }

  /** Note a try to forward with the app's answer; returns its list view, or undefined when the delivery is not kept. */
  forward(event: ForwardEvent): ForwardView | undefined {
    const entry = this.entries.get(event.seq);
    if (!entry) return undefined;
    entry.forward = { ...forwardView(event), ...answerView(event.answer, this.secrets) };
    return listForward(entry.forward);
  }

  /**
   * Note a try read back from the record file (its forward entry), when its delivery is kept. Scrubbed
   * again: a file recorded by a run with other secrets may hold one of this run's.
   */
  restoreForward(f: ForwardEntry): void {
    const entry = this.entries.get(f.seq);
    if (!entry) return;
    const view: ForwardView = { url: f.url, attempt: f.attempt, ok: f.ok, status: f.status, ms: f.ms };
    if (f.error !== undefined) view.error = f.error;
    if (f.headers !== undefined) {
      const headers = emptyRecord<string>();
      for (const [name, value] of Object.entries(f.headers)) headers[this.scrub(name)] = this.scrub(String(value));
      view.headers = headers;
    }
    if ('body' in f) view.body = redactValue(this.secrets, f.body);
    if (f.bodyTruncated === true) view.bodyTruncated = true;
    entry.forward = view;
  }

  private scrub(text: string): string {
    let out = text;
    for (const secret of this.secrets) out = scrubSecret(out, secret);
    return out;
  }

  /** Every kept entry's view, oldest first. */
  *views(): Iterable<EntryView> {
    for (const e of this.entries.values()) yield entryView(e, this.verified);
  }

  /** The list view of a kept delivery; undefined when it is not kept. */
  view(seq: number): EntryView | undefined {
    const e = this.entries.get(seq);
    return e && entryView(e, this.verified);
  }

  lookup(seq: number): Lookup {
    const e = this.entries.get(seq);
    if (e) return { kind: 'kept', delivery: e.delivery };
    return seq >= 1 && seq <= this.droppedUpTo ? { kind: 'dropped' } : { kind: 'unknown' };
  }

  /** The detail of a kept delivery; undefined when it is not kept. */
  detail(seq: number): DetailView | undefined {
    const entry = this.entries.get(seq);
    if (!entry) return undefined;
    const shown = entry.shown;
    const cut = shown.body.length > DETAIL_BODY_BYTES;
    const view: DetailView = {
      seq: shown.seq,
      receivedAt: shown.receivedAt,
      method: shown.method,
      path: shown.path,
      headers: shown.headers,
      body: cut ? shown.body.subarray(0, DETAIL_BODY_BYTES).toString('utf8') : bodyValue(shown.body),
      size: entry.delivery.body.length,
      change: entry.change,
    };
    if (cut) view.bodyTruncated = true;
    if (entry.forward) view.forward = entry.forward;
    return view;
  }
}

function entryView(entry: Entry, verified: boolean): EntryView {
  const shown = entry.shown;
  // Decoding only the bytes the preview can use: at most 4 bytes a character.
  const preview = shown.body.subarray(0, PREVIEW_CHARS * 4).toString('utf8').slice(0, PREVIEW_CHARS);
  const v: EntryView = { seq: shown.seq, receivedAt: shown.receivedAt, method: shown.method, path: shown.path, size: entry.delivery.body.length, verified, recorded: entry.recorded, change: entry.change, preview };
  if (entry.change.cardName !== undefined) v.cardName = entry.change.cardName;
  if (entry.forward) v.forward = listForward(entry.forward);
  if (entry.routes) v.routes = entry.routes;
  return v;
}
