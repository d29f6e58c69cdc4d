// `webhook replay` as an engine: the record file read in order, each delivery that matches --from,
// --filter and --changed sent as it was recorded (or with --set, its card edited), one at a time, until
// the end or a drain. It emits each answer and never prints; the command renders them.
import { statSync } from 'node:fs';
import { CardboardError, UsageError } from '../errors.js';
import { terminalText } from '../io/text.js';
import { ownValue } from '../own-keys.js';
import { checkKeys, describeUnknownKeys } from '../schema/match.js';
import type { Duration } from '../units.js';
import { CardStates, cardIn } from './changes.js';
import { type Answer, DeliveryClient } from './client.js';
import { bodyValue, type Delivery, outgoingHeaders } from './delivery.js';
import { inexactNumber } from './json-bytes.js';
import { readDeliveries, sniffRecordFile } from './record-file.js';

/** What to replay, and where. */
interface ReplayPlan {
  file: string;
  to: string;
  /** First sequence number to send. */
  from: number;
  /** Field=value pairs a delivery's JSON body must all match. */
  filters: Array<[string, string]>;
  /** Fields of which a delivery must have changed at least one (against the card's delivery before it). */
  changed: string[];
  /** Fields set in each replayed card (`--set`); none: every delivery is sent as recorded. */
  edit?: CardEdit;
  /** The signing key each delivery is sent with (spec 6). */
  key: string;
  /** Secrets no change may be read with (CardStates). */
  secrets: readonly string[];
  timeout: Duration;
}

/** `--set`: fields given a value in each replayed card before it is sent. */
export interface CardEdit {
  /** Field name → value: a string for Field=value, any JSON value for Field:=json (a null-prototype record). */
  set: Record<string, unknown>;
  /** A field the card does not have is added (`--allow-unknown`); else it is an error before anything is sent. */
  allowUnknown: boolean;
}

/** The receiver's answer to one delivery; `notSent` when --set could not edit its body (nothing was sent). */
export interface ReplayAnswer {
  seq: number;
  answer: Answer;
  notSent?: string;
}

/** Why a delivery is not sent under --set. */
const NOT_A_CARD = 'not sent: its body is not a card (a JSON object) for --set to change';

/** What a replay read and sent. */
export interface ReplayResult {
  /** Deliveries read (all of them from #1 with --filter or --changed). */
  read: number;
  /** Deliveries from --from on: none (an empty range) replays nothing and is no error, whatever --filter says. */
  inRange: number;
  /** Deliveries whose body is a card, and the field names those cards have (bounded). */
  cards: number;
  fields: Set<string>;
  /** Lines of the file that are not a delivery. */
  unreadable: number[];
  sent: number;
  /** `#seq status` of each answer that was not 200. */
  failed: string[];
  /** Deliveries not sent because --set could not edit their body (not a card JSON object). */
  notCards: number[];
  /** Some answer was 401 or 403: the receiver refused the key. */
  refused: boolean;
}

/** Field names gathered from the deliveries read, to check --filter against; bounded for a hostile file. */
const MAX_FIELD_NAMES = 10_000;

/** Whether a delivery's card matches every filter (field names exact and case-sensitive, spec 2.2). */
export function matchesFilters(d: Delivery, filters: Array<[string, string]>): boolean {
  return filters.length === 0 || cardMatches(cardOf(d), filters);
}

function cardMatches(card: Record<string, unknown> | undefined, filters: Array<[string, string]>): boolean {
  // Own fields only: `--filter constructor=x` must not find Object.prototype's.
  return (
    card !== undefined &&
    filters.every(([field, want]) => {
      const v = ownValue(card, field);
      return v !== undefined && (typeof v === 'string' ? v : JSON.stringify(v)) === want;
    })
  );
}

/**
 * The card a delivery's body holds: the body when it is a JSON object; with `unwrap` (--changed), the card
 * as CardStates reads it, which may be wrapped in an event (`{"event":…,"data":{"_id":…}}`).
 */
function cardOf(delivery: Delivery, unwrap = false): Record<string, unknown> | undefined {
  return unwrap ? cardIn(bodyValue(delivery.body)) : cardBody(delivery.body);
}

/** The body as a card: a JSON object (parsed, so its own keys are plain keys, `__proto__` too), else undefined. */
function cardBody(body: Buffer): Record<string, unknown> | undefined {
  const value = bodyValue(body);
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/**
 * The body a delivery is replayed with under --set: its card re-serialised as JSON with each field set (in
 * place when the card has it, else added last); undefined when the body is not a card JSON object.
 */
export function editedBody(body: Buffer, set: Record<string, unknown>): Buffer | undefined {
  const card = cardBody(body);
  if (card === undefined) return undefined;
  // defineProperty: `card.__proto__ = v` would set the prototype instead of the field named `__proto__`.
  for (const [name, value] of Object.entries(set)) Object.defineProperty(card, name, { value, enumerable: true, writable: true, configurable: true });
  return Buffer.from(JSON.stringify(card), 'utf8');
}

/**
 * The --set fields a delivery's card lacks, as an error naming them (with the nearest field of that card);
 * and a card with a number that its edit, written again from the parsed card, would change (a 20-digit id
 * rounded): refused, nothing sent, rather than sent other than recorded.
 */
function checkEdit(delivery: Delivery, edit: CardEdit): void {
  const card = cardBody(delivery.body);
  // Not a card: that delivery is reported as not sent when its turn comes; the others are sent.
  if (card === undefined) return;
  const inexact = inexactNumber(delivery.body.toString('utf8'));
  if (inexact !== undefined) {
    throw new CardboardError(`--set: the card of #${delivery.seq} has a number that a JSON parse cannot keep (${shortNumber(inexact)}): edited, it would be sent changed`, {
      hint: 'Replay that delivery without --set, or leave it out with --filter or --from.',
    });
  }
  if (edit.allowUnknown) return;
  const fields = Object.keys(card);
  const unknown = checkKeys(Object.keys(edit.set), fields);
  if (unknown.length === 0) return;
  const shown = fields.slice(0, 10).map((f) => terminalText(f));
  throw new UsageError(`--set: ${describeUnknownKeys(unknown)} in the card of #${delivery.seq}`, {
    hint: `Field names are compared exactly, case included (spec 2.2); that card has ${shown.join(', ')}${fields.length > shown.length ? ', …' : ''}. --allow-unknown adds a field the card lacks.`,
  });
}

/** A number as an error shows it: its first 24 characters. */
export function shortNumber(token: string): string {
  return token.length > 24 ? `${token.slice(0, 24)}…` : token;
}

/** The file named must be a record file: `replay big.csv` must fail, not replay nothing and exit 0. */
export function checkRecordFile(file: string): 'empty' | 'record' {
  let kind: ReturnType<typeof sniffRecordFile>;
  try {
    if (!statSync(file).isFile()) throw new UsageError(`${file} is not a file: give a record file written by \`cardboard webhook listen --record\``);
    kind = sniffRecordFile(file);
  } catch (err) {
    if (err instanceof UsageError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    throw new UsageError(code === 'ENOENT' ? `no such record file: ${file}` : `cannot read ${file} (${code ?? (err as Error).message})`, { cause: err });
  }
  if (kind === 'other') {
    throw new UsageError(`${file} is not a record file: its first line is not a delivery recorded by \`cardboard webhook listen --record\``, {
      hint: 'A record file holds one delivery a line ({"seq":1,"receivedAt":…,"bodyBase64":…}); make one with `cardboard webhook listen --record hooks.jsonl`.',
    });
  }
  return kind;
}

/**
 * One replay: run() sends the matching deliveries one by one in recorded order until the end of the file,
 * or until `drain` aborts (the delivery in flight is answered first) or `signal` does (it is cut off).
 */
export class Replay {
  /** Where a resumed run starts: just past the last delivery answered. */
  resumeAt: number;
  /** The delivery sent and not answered yet. */
  inFlight: number | undefined;

  constructor(
    private readonly plan: ReplayPlan,
    private readonly opts: { drain: AbortSignal; signal: AbortSignal; onAnswer(a: ReplayAnswer): void },
  ) {
    this.resumeAt = plan.from;
  }

  async run(): Promise<ReplayResult> {
    const { edit } = this.plan;
    // --set: every card to be sent is checked first, so a field it lacks sends nothing (exit 2).
    if (edit) {
      await this.walk(emptyResult(), async (delivery) => {
        checkEdit(delivery, edit);
        return true;
      });
    }
    const client = new DeliveryClient(1);
    const result = emptyResult();
    try {
      await this.walk(result, (delivery) => this.send(client, delivery, result));
    } finally {
      await client.close();
    }
    return result;
  }

  /**
   * Read the file in order and call `visit` with each delivery that --from, --filter and --changed select,
   * until the end of the file, a drain, or `visit` answers false; counts what was read into `result`.
   */
  private async walk(result: ReplayResult, visit: (delivery: Delivery) => Promise<boolean>): Promise<void> {
    const { plan } = this;
    const { drain } = this.opts;
    const states = plan.changed.length ? new CardStates({ secrets: plan.secrets }) : undefined;
    const wanted = new Set(plan.changed);
    const size = statSync(plan.file).size;
    let lineBase = 0;
    for (let offset = 0; offset < size && !drain.aborted; ) {
      // With --changed every delivery is read, to know each card's state before the first one sent; with
      // --filter too, so that its field is checked against the whole file, not only the part from --from.
      const whole = states !== undefined || plan.filters.length > 0;
      const batch = readDeliveries(plan.file, offset, whole ? 0 : plan.from - 1, 100, 8 * 1024 * 1024);
      for (const i of batch.unreadable) result.unreadable.push(lineBase + i + 1);
      lineBase += batch.lines;
      // No progress: only a last line cut short by a crash is left (never acknowledged, so not a delivery).
      if (batch.next === offset) break;
      offset = batch.next;
      for (const delivery of batch.deliveries) {
        if (drain.aborted) break;
        result.read++;
        const change = states?.apply(delivery.body);
        const card = plan.filters.length || states ? cardOf(delivery, states !== undefined) : undefined;
        if (card) {
          result.cards++;
          for (const f of Object.keys(card)) if (result.fields.size < MAX_FIELD_NAMES) result.fields.add(f);
        }
        if (delivery.seq < plan.from) continue;
        result.inRange++;
        if (plan.filters.length && !cardMatches(card, plan.filters)) continue;
        if (change && !change.changes.some((c) => wanted.has(c.field))) continue;
        if (!(await visit(delivery))) return;
      }
    }
  }

  /** Send one delivery (its card edited under --set) and report the answer; false when SIGTERM cut it off. */
  private async send(client: DeliveryClient, delivery: Delivery, result: ReplayResult): Promise<boolean> {
    const { plan } = this;
    const { signal } = this.opts;
    let body = delivery.body;
    if (plan.edit) {
      const edited = editedBody(delivery.body, plan.edit.set);
      if (edited === undefined) {
        result.notCards.push(delivery.seq);
        this.resumeAt = delivery.seq + 1;
        this.opts.onAnswer({ seq: delivery.seq, answer: { ms: 0, body: Buffer.alloc(0), error: NOT_A_CARD }, notSent: NOT_A_CARD });
        return true;
      }
      body = edited;
    }
    this.inFlight = delivery.seq;
    // outgoingHeaders drops the recorded content-length: the client sets the edited body's.
    const answer = await client.send({ url: plan.to, method: delivery.method, headers: outgoingHeaders(delivery.headers, plan.key), body, timeout: plan.timeout, signal });
    // Cut off by SIGTERM: not answered, so a resumed run sends it again.
    if (answer.status === undefined && signal.aborted) return false;
    this.inFlight = undefined;
    result.sent++;
    this.resumeAt = delivery.seq + 1;
    if (answer.status !== 200) result.failed.push(`#${delivery.seq} ${answer.status ?? answer.error}`);
    if (answer.status === 401 || answer.status === 403) result.refused = true;
    this.opts.onAnswer({ seq: delivery.seq, answer });
    return true;
  }
}

function emptyResult(): ReplayResult {
  return { read: 0, inRange: 0, cards: 0, fields: new Set(), unreadable: [], sent: 0, failed: [], notCards: [], refused: false };
}
