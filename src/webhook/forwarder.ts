import { childStop } from '../interrupt.js';
import { closeSync, existsSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { type Clock, realClock } from '../clock.js';
import { openPrivate, writePrivateFile } from '../private-file.js';
import type { Duration } from '../units.js';
import { APP_BACKOFF, appFailure, appPolicy } from '../http/app-policy.js';
import { retrying } from '../http/retry.js';
import { type Answer, DeliveryClient } from './client.js';
import { type Delivery, outgoingHeaders } from './delivery.js';
import { FORWARDED_HEADER } from './limits.js';
import { type RecordFile, readDeliveries } from './record-file.js';

/** The result of one try to forward a delivery to the app. */
export interface ForwardEvent {
  type: 'forward';
  seq: number;
  /** Where it was forwarded (the --forward-to URL of its route). */
  url: string;
  attempt: number;
  answer: Answer;
  /** A 2xx answer: the delivery is done. */
  ok: boolean;
  /** When not ok: the wait before the next try. */
  retryInMs?: number;
  /** Deliveries still waiting to be forwarded, this one included when not ok. */
  pending: number;
}

interface ForwarderOptions {
  url: string;
  timeout: Duration;
  /** The key in use: sent as x-signingKey so the app's own check passes (spec 6). */
  key: string | undefined;
  /** The source of truth: every delivery to forward is in it, written before the service got its 200. */
  record: RecordFile;
  onEvent: (e: ForwardEvent) => void;
  /** The listener's id, added to x-cardboard-forwarded so that a delivery coming back is known and never forwarded in a loop. */
  forwardedBy?: string;
  /** Deliveries kept in memory; past it they are read back from the record file (default 1000). */
  memoryCount?: number;
  /** Body bytes kept in memory (default 32 MiB). */
  memoryBytes?: number;
  /** Backoff between tries: the first wait's ceiling (default 100 ms) and the largest (default 5 s). */
  retryBaseMs?: number;
  retryCapMs?: number;
  clock?: Clock;
  /** The ack log (default cursorPath of the record file): one per route, so each resumes where it was. */
  cursor?: string;
  /**
   * Whether this route takes a delivery (a filtered route, routes.ts); one it does not take is passed over
   * and counted as done, unsent. Undefined: every delivery.
   */
  takes?: (delivery: Delivery) => boolean;
  /** With `takes`: how many of the deliveries after `afterSeq` up to `lastSeq` it takes (those a resumed run sends). */
  taken?: (afterSeq: number, lastSeq: number) => number;
}

/** Path of the ack log of a record file: one forwarded sequence number a line. */
export function cursorPath(recordPath: string): string {
  return `${recordPath}.forwarded`;
}

function readCursor(path: string): number | undefined {
  if (!existsSync(path)) return undefined;
  let max = 0;
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    const n = Number(line);
    if (line !== '' && Number.isInteger(n) && n > max) max = n;
  }
  return max;
}

/**
 * Forwards recorded deliveries to the app one at a time in arrival order, retrying each as the app
 * policy says (capped exponential backoff, at least the retry floor for a 429 or 503) until it gets a
 * 2xx. It only ever reads what the listener has already
 * recorded and acknowledged, so it can be as slow as the app without delaying a 200 to the service.
 * Memory is bounded: past the limits the queue "spills" and later deliveries are read back from the
 * record file. Each forwarded seq is appended to `<record>.forwarded`, so a restart resumes after the
 * last one (at least once: a forward cut off by a crash or a shutdown is sent again).
 */
export class Forwarder {
  private readonly client = new DeliveryClient(1);
  private readonly stopper = childStop();
  private readonly cursorFd: number;
  private queue: Delivery[] = [];
  private queueBytes = 0;
  /** Offset in the record file of the first delivery not in memory; undefined when none is on disk only. */
  private spillFrom: number | undefined;
  private lastAcked: number;
  /** Deliveries passed over (not taken) since the ack log was last written: written before the loop waits. */
  private passedOver = false;
  /** With `takes`: the deliveries recorded, taken and not forwarded yet (`pending`). */
  private waiting = 0;
  private wake: (() => void) | undefined;
  private done: Promise<void> | undefined;
  /** Deliveries that were already in the record file and get forwarded now (a resumed run). */
  readonly resumed: number;
  /** Deliveries already in a record file that had never been forwarded to anything: left to `replay`. */
  readonly skipped: number;

  constructor(private readonly opts: ForwarderOptions) {
    const path = opts.cursor ?? cursorPath(opts.record.path);
    const cursor = readCursor(path);
    // A record file made without --forward-to: forward only what arrives from now on.
    this.lastAcked = cursor ?? opts.record.lastSeq;
    this.skipped = cursor === undefined ? opts.record.lastSeq : 0;
    const after = opts.record.lastSeq - this.lastAcked;
    if (after > 0) this.spillFrom = 0;
    this.resumed = opts.takes && after > 0 ? (opts.taken?.(this.lastAcked, opts.record.lastSeq) ?? after) : after;
    this.waiting = this.resumed;
    if (cursor === undefined || cursor > 0) {
      // Start (or compact) the ack log with the one number that matters.
      writePrivateFile(`${path}.tmp`, `${this.lastAcked}\n`, { flag: '--record' });
      renameSync(`${path}.tmp`, path);
    }
    this.cursorFd = openPrivate(path, 'a', { flag: '--record', reread: true });
  }

  /** Deliveries recorded but not yet forwarded (with `takes`: those it takes). */
  get pending(): number {
    return this.opts.takes ? this.waiting : this.opts.record.lastSeq - this.lastAcked;
  }

  /** Deliveries held in memory right now (the rest of `pending` waits in the record file). */
  get inMemory(): number {
    return this.queue.length;
  }

  /** Start the forwarding loop. */
  start(): void {
    this.done ??= this.run();
  }

  /** Queue a delivery just recorded at `offset` in the record file. */
  enqueue(delivery: Delivery, offset: number): void {
    if (this.opts.takes?.(delivery)) this.waiting++;
    // A body larger than the byte bound is kept when nothing else waits: it is in memory already, and
    // reading its record line back would cost several times its size.
    const fits = this.queue.length === 0 || (this.queue.length < (this.opts.memoryCount ?? 1000) && this.queueBytes + delivery.body.length <= (this.opts.memoryBytes ?? 32 * 1024 * 1024));
    if (this.spillFrom === undefined && fits) {
      this.queue.push(delivery);
      this.queueBytes += delivery.body.length;
    } else {
      this.spillFrom ??= offset;
    }
    this.wake?.();
  }

  /** Stop: abort the forward in flight (it stays unacknowledged and is sent again on resume) and wait. */
  async stop(): Promise<void> {
    this.stopper.abort();
    this.wake?.();
    await this.done;
    this.writePassedOver();
    closeSync(this.cursorFd);
    await this.client.close();
  }

  private refill(): void {
    const opts = this.opts;
    const batch = readDeliveries(opts.record.path, this.spillFrom!, this.lastAcked, opts.memoryCount ?? 1000, opts.memoryBytes ?? 32 * 1024 * 1024);
    for (const d of batch.deliveries) {
      this.queue.push(d);
      this.queueBytes += d.body.length;
    }
    this.spillFrom = batch.next >= opts.record.size ? undefined : batch.next;
  }

  private async run(): Promise<void> {
    while (!this.stopper.signal.aborted) {
      if (this.queue.length === 0 && this.spillFrom !== undefined) this.refill();
      const head = this.queue[0];
      if (!head) {
        // Nothing recorded is left to weigh: none waits (a count that took an undecided delivery for taken is righted here).
        this.waiting = 0;
        this.writePassedOver();
        await new Promise<void>((resolve) => {
          this.wake = resolve;
        });
        this.wake = undefined;
        continue;
      }
      const taken = this.opts.takes === undefined || this.opts.takes(head);
      if (taken && !(await this.forward(head))) return;
      if (taken) this.waiting--;
      this.queue.shift();
      this.queueBytes -= head.body.length;
      // One line per delivery forwarded; a run of deliveries passed over costs one line, when the loop idles.
      if (taken) writeSync(this.cursorFd, `${head.seq}\n`);
      this.passedOver = !taken;
      this.lastAcked = head.seq;
    }
  }

  /** Note in the ack log the deliveries passed over since the last line (a restart then does not weigh them again). */
  private writePassedOver(): void {
    if (!this.passedOver) return;
    this.passedOver = false;
    writeSync(this.cursorFd, `${this.lastAcked}\n`);
  }

  /**
   * Try until a 2xx; false when stopped first. The tries are the one retry loop's (src/http/retry.ts) under
   * the app policy (src/http/app-policy.ts): every failure is repeated, and each failed try is an event
   * with the wait before the next.
   */
  private async forward(delivery: Delivery): Promise<boolean> {
    const opts = this.opts;
    const headers = outgoingHeaders(delivery.headers, opts.key);
    if (opts.forwardedBy !== undefined) {
      // Appended to the ids of the listeners it already went through, so a chain of listeners cannot loop either.
      const name = Object.keys(headers).find((h) => h.toLowerCase() === FORWARDED_HEADER) ?? FORWARDED_HEADER;
      headers[name] = headers[name] === undefined ? opts.forwardedBy : `${headers[name]}, ${opts.forwardedBy}`;
    }
    const clock = opts.clock ?? realClock;
    const stop = this.stopper.signal;
    let attempt = 0;
    let answer: Answer | undefined;
    const once = async (): Promise<Answer> => {
      attempt++;
      answer = await this.client.send({ url: opts.url, method: delivery.method, headers, body: delivery.body, timeout: opts.timeout, signal: stop });
      if (answer.status !== undefined && answer.status >= 200 && answer.status < 300) return answer;
      throw appFailure(delivery.method, opts.url, answer, clock.now());
    };
    const policy = appPolicy<undefined>({
      clock,
      // The jitter keeps a fleet of listeners from retrying in step.
      backoff: { baseMs: opts.retryBaseMs ?? APP_BACKOFF.baseMs, maxMs: opts.retryCapMs ?? APP_BACKOFF.maxMs },
      stop,
      onRetry: (info) => opts.onEvent({ type: 'forward', seq: delivery.seq, url: opts.url, attempt: info.attempt, answer: answer!, ok: false, retryInMs: info.delayMs, pending: this.pending }),
    });
    try {
      await retrying(once, undefined, policy, stop, { clock });
    } catch (err) {
      // Stopped during a try or a wait: the forward stays unacknowledged and is sent again on resume.
      if (stop.aborted) return false;
      throw err;
    }
    opts.onEvent({ type: 'forward', seq: delivery.seq, url: opts.url, attempt, answer: answer!, ok: true, retryInMs: undefined, pending: this.pending - 1 });
    return true;
  }
}
