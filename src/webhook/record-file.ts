import { closeSync, fdatasync, fstatSync, openSync, readSync, writeSync } from 'node:fs';
import { type Clock, realClock } from '../clock.js';
import { UsageError } from '../errors.js';
import { openPrivate } from '../private-file.js';
import { type Delivery, parseRecordLine, recordLinePieces } from './delivery.js';
import { type ForwardEntry, forwardLineJson, parseForwardLine } from './forward-entry.js';
import { LARGE_BODY, parseLargeRecordLine, type Piece } from './large-lines.js';

const CHUNK = 64 * 1024;
/** Text of record lines is gathered up to this many bytes per write. */
const SCRATCH = 1024 * 1024;
const NEWLINE = 0x0a;

/**
 * Call visit(line, offset) for each complete line of the file from byte `from`, until visit returns false
 * or the end. Returns the offset just past the last line visited and accepted. A last line without its
 * newline (cut short by a crash) is never visited. Synchronous on purpose: the writer appends with
 * writeSync on the same thread, so a reader can never see half a line that is still being written.
 */
function readLinesSync(path: string, from: number, visit: (line: Buffer, offset: number) => boolean): number {
  const fd = openSync(path, 'r');
  try {
    let pos = from;
    let consumed = from;
    // The start of a line longer than what was read so far, in chunks joined once its end is found: joining
    // at every read would copy a long line (a 100 MB body's) over and over, quadratic in its length.
    let carry: Buffer[] = [];
    let carryBytes = 0;
    for (;;) {
      const chunk = Buffer.allocUnsafe(CHUNK);
      const bytesRead = readSync(fd, chunk, 0, CHUNK, pos);
      if (bytesRead === 0) return consumed;
      pos += bytesRead;
      const data = chunk.subarray(0, bytesRead);
      let start = 0;
      for (let i = data.indexOf(NEWLINE); i !== -1; i = data.indexOf(NEWLINE, start)) {
        const line = carryBytes > 0 ? Buffer.concat([...carry, data.subarray(start, i)], carryBytes + i - start) : data.subarray(start, i);
        if (!visit(line, consumed)) return consumed;
        consumed += line.length + 1;
        carry = [];
        carryBytes = 0;
        start = i + 1;
      }
      if (start < bytesRead) {
        carry.push(data.subarray(start));
        carryBytes += bytesRead - start;
      }
    }
  } finally {
    closeSync(fd);
  }
}

/** The sequence number of a record line, read without parsing it whole (it is written first); NaN if none. */
function lineSeq(line: Buffer): number {
  const m = /^\{"seq":(\d+),/.exec(line.subarray(0, 32).toString('latin1'));
  return m ? Number(m[1]) : Number.NaN;
}

const FORWARD_START = Buffer.from('{"forward":', 'latin1');

/** Whether a record line is a forward try's entry (`{"forward":{…}}`), which is not a delivery. */
function isForwardLine(line: Buffer): boolean {
  return line.length > FORWARD_START.length && line.subarray(0, FORWARD_START.length).equals(FORWARD_START);
}

/** Deliveries read from a record file, with where the reading stopped. */
interface ReadBatch {
  deliveries: Delivery[];
  /** Offset of the first line not read; equal to the file size when everything was read. */
  next: number;
  /** Lines read (every line, blank or not), so a caller reading batch after batch can number them. */
  lines: number;
  /** The lines, counted from 0 in this batch, that are neither blank, nor a delivery, nor a forward entry (cut short by a crash). */
  unreadable: number[];
}

const BLANK = /^\s*$/;

/**
 * Read up to `maxCount` deliveries / about `maxBytes` from `from`, skipping unreadable lines and seq ≤ afterSeq.
 * Forward entries are not deliveries: skipped, or handed to `onForward` when given (whatever their seq).
 */
export function readDeliveries(path: string, from: number, afterSeq: number, maxCount: number, maxBytes: number, onForward?: (entry: ForwardEntry) => void): ReadBatch {
  const deliveries: Delivery[] = [];
  const unreadable: number[] = [];
  let bytes = 0;
  let lines = 0;
  const next = readLinesSync(path, from, (line) => {
    if (deliveries.length >= maxCount || (bytes > 0 && bytes + line.length > maxBytes)) return false;
    const seq = lineSeq(line);
    if (seq > afterSeq) {
      try {
        deliveries.push((line.length >= LARGE_BODY ? parseLargeRecordLine(line) : undefined) ?? parseRecordLine(line.toString('utf8')));
        bytes += line.length;
      } catch {
        // A line cut short by a crash was never acknowledged (it is written before the 200): skip it.
        unreadable.push(lines);
      }
    } else if (Number.isNaN(seq) && isForwardLine(line)) {
      // One cut short by a crash is skipped as silently: it only ever told how a forward went.
      const entry = onForward ? parseForwardLine(line.toString('utf8')) : undefined;
      if (entry) onForward?.(entry);
    } else if (Number.isNaN(seq) && !BLANK.test(line.subarray(0, 64).toString('latin1'))) {
      unreadable.push(lines);
    }
    lines++;
    return true;
  });
  return { deliveries, next, lines, unreadable };
}

/** The bytes looked at to tell a record file from another file: enough for blank lines and the start of a line. */
const SNIFF_BYTES = 64 * 1024;

/**
 * What the start of a file says about it: `empty` (nothing but blank lines: a listener that got nothing
 * yet), `record` (the first non-blank line starts as every delivery's line does, `{"seq":N,`, or as a
 * forward entry's, `{"forward":`), or `other` (a CSV, someone else's JSON Lines, a binary). Reads at most
 * 64 KiB, whatever the file.
 */
export function sniffRecordFile(path: string): 'empty' | 'record' | 'other' {
  const fd = openSync(path, 'r');
  try {
    const head = Buffer.allocUnsafe(SNIFF_BYTES);
    const bytesRead = readSync(fd, head, 0, SNIFF_BYTES, 0);
    const text = head.subarray(0, bytesRead).toString('latin1');
    const start = text.search(/\S/);
    if (start === -1) return bytesRead < SNIFF_BYTES ? 'empty' : 'other';
    const first = head.subarray(start, bytesRead);
    return Number.isNaN(lineSeq(first)) && !isForwardLine(first) ? 'other' : 'record';
  } finally {
    closeSync(fd);
  }
}

/** The refusal of a file that holds something other than deliveries: appending to it would change someone's data. */
function notARecord(path: string): UsageError {
  return new UsageError(`--record ${path} is not a record file: its first line is not a delivery recorded by \`cardboard webhook listen --record\`. Nothing was written to it.`, {
    hint: 'Pass --record with a new file, an empty one, or one a listener recorded (it is appended to).',
  });
}

/**
 * Refuse (UsageError naming --record, exit 2) an existing file, or the target of a symlink, that holds
 * something other than deliveries; an absent or empty file passes. Checked before anything is made beside it
 * (the lock); the RecordFile checks again once it has opened the file.
 */
export function requireRecordFile(path: string): void {
  let kind: ReturnType<typeof sniffRecordFile>;
  try {
    kind = sniffRecordFile(path);
  } catch {
    // Absent or unreadable: opening it says why.
    return;
  }
  if (kind === 'other') throw notARecord(path);
}

/** A delivery as appended: numbered, where its line starts, and its `--json` line when one was made. */
export interface Recorded {
  delivery: Delivery;
  offset: number;
  view: string | undefined;
}

/** Options of a RecordFile; the defaults are the listener's. */
interface RecordFileOptions {
  /** The least time between the starts of two fdatasyncs, in ms (default SYNC_INTERVAL_MS); 0: one right after another. */
  syncIntervalMs?: number;
  /** Time and its waits; simulated in tests. */
  clock?: Clock;
}

/**
 * The least time between two fdatasyncs of a record file. Each one costs a journal commit and a disk write
 * whatever it covers: syncing as often as the disk allows, one right after the other, costs as much CPU as
 * the rest of recording (docs/benchmarks.md). 50 ms leaves at most 20 syncs a second, each small enough not
 * to hold up the writes that go on beside it, and bounds what an OS crash can take to the last 50 ms.
 */
const SYNC_INTERVAL_MS = 50;

/**
 * An append-only record file. The deliveries of one event-loop turn are written with one
 * writeSync *before* their 200s are sent, so once the service holds a 200 the bytes are in the kernel and
 * survive a crash of this process. fdatasync, which covers an OS crash or a power loss too, follows in the
 * background, never in the way of an acknowledgement: group-committed (one sync covers every line written
 * before it started), one at a time, and started at most once every `syncIntervalMs`, like PostgreSQL's
 * commit_delay or Redis's `appendfsync everysec`. After a quiet spell the first delivery's sync starts in
 * the turn after its 200; later ones wait for the interval to run out. So the durability window is this:
 * an OS crash or power loss can lose the deliveries acknowledged in the last `syncIntervalMs` plus the time
 * two fdatasyncs take (the one running and the one that will cover them), never one acknowledged before
 * that; a crash of the process itself loses nothing acknowledged. flush() and close() (SIGINT, SIGTERM: the
 * listener's stop) sync at once whatever is pending, without waiting for the interval.
 */
export class RecordFile {
  /** Sequence number of the last delivery in the file (0 when empty). */
  lastSeq = 0;
  /** Current size: the offset the next line will be written at. */
  size = 0;
  private readonly fd: number;
  private readonly syncIntervalMs: number;
  private readonly clock: Clock;
  /** Written since the last fdatasync started. */
  private dirty = false;
  /** A sync is due: in the next turn, or once the interval has run out. */
  private scheduled = false;
  /** When the last fdatasync started (clock time), or -Infinity. */
  private lastSyncAt = Number.NEGATIVE_INFINITY;
  /** Ends the wait for the interval when the file is closed. */
  private readonly closing = new AbortController();
  /** A failed write left part of a line behind: the next write starts on a new line. */
  private torn = false;
  private syncing: Promise<void> | undefined;
  private closed = false;
  private scratch: Buffer | undefined;

  constructor(
    readonly path: string,
    opts: RecordFileOptions = {},
  ) {
    this.syncIntervalMs = opts.syncIntervalMs ?? SYNC_INTERVAL_MS;
    this.clock = opts.clock ?? realClock;
    // Created 0600; one that exists keeps its mode, and is appended to only when it holds deliveries or nothing
    // (a file of other content is refused untouched). It is re-read on restart, so a FIFO or device is refused.
    this.fd = openPrivate(path, 'a', { flag: '--record', reread: true });
    this.size = fstatSync(this.fd).size;
    // Read by path, as recover() does: the descriptor is open for appending only.
    if (this.size > 0 && sniffRecordFile(path) === 'other') {
      closeSync(this.fd);
      throw notARecord(path);
    }
    if (this.size > 0) this.recover();
  }

  private recover(): void {
    const end = readLinesSync(this.path, 0, (line) => {
      const seq = lineSeq(line);
      if (seq > this.lastSeq) this.lastSeq = seq;
      return true;
    });
    // A crash may have cut the last line short; end it so the next line starts clean (it is skipped on read).
    if (end < this.size) this.write('\n');
  }

  /** Write all of `text` at the end; returns the offset it starts at. Throws on a write error. */
  private write(text: string): number {
    return this.writeLines([[text]])[0]!;
  }

  /**
   * Append lines given in pieces; returns the offset each starts at. Text pieces are gathered into one
   * write (up to 1 MiB), a Buffer piece (a large body) is written as it is, uncopied. Throws on a write
   * error; a line written in part leaves the file torn, and the next write starts on a new line.
   */
  private writeLines(lines: Iterable<Iterable<Piece>>): number[] {
    const starts: number[] = [];
    const before = this.size;
    // Text is gathered in one reused buffer: a large line's many pieces leave no Buffers behind for the GC.
    const scratch = (this.scratch ??= Buffer.allocUnsafe(SCRATCH));
    let textBytes = 0;
    const writeAll = (bytes: Buffer) => {
      let done = 0;
      try {
        while (done < bytes.length) done += writeSync(this.fd, bytes, done, bytes.length - done);
      } finally {
        this.size += done;
      }
    };
    const flush = () => {
      if (textBytes === 0) return;
      const n = textBytes;
      textBytes = 0;
      writeAll(scratch.subarray(0, n));
    };
    const add = (text: string) => {
      // A UTF-16 unit is at most 3 bytes of UTF-8: when that much room is left, the text is written without
      // measuring it first (one call into C++ instead of two, four times per delivery).
      if (textBytes + text.length * 3 <= scratch.length) {
        textBytes += scratch.write(text, textBytes, 'utf8');
        return;
      }
      const bytes = Buffer.byteLength(text);
      if (textBytes + bytes > scratch.length) flush();
      if (bytes > scratch.length) writeAll(Buffer.from(text, 'utf8'));
      else textBytes += scratch.write(text, textBytes, 'utf8');
    };
    try {
      if (this.torn) add('\n');
      for (const line of lines) {
        starts.push(this.size + textBytes);
        for (const piece of line) {
          if (typeof piece === 'string') {
            add(piece);
          } else {
            flush();
            writeAll(piece);
          }
        }
      }
      flush();
    } catch (err) {
      this.torn ||= this.size > before;
      throw err;
    }
    this.torn = false;
    return starts;
  }

  /**
   * Number the deliveries and append them with one write; returns them with each line's offset and, for a
   * small body, its `--json` line (made on the way). Throws on a write error, and then none of them counts
   * as recorded (a line written in part is skipped on read).
   */
  appendAll(batch: readonly Omit<Delivery, 'seq'>[]): Recorded[] {
    const deliveries = batch.map((d, i): Delivery => ({ seq: this.lastSeq + 1 + i, receivedAt: d.receivedAt, method: d.method, path: d.path, headers: d.headers, body: d.body }));
    const lines = deliveries.map(recordLinePieces);
    const offsets = this.writeLines(lines.map((l) => l.pieces));
    this.lastSeq += deliveries.length;
    this.dirty = true;
    this.scheduleSync();
    return deliveries.map((delivery, i) => ({ delivery, offset: offsets[i]!, view: lines[i]!.view }));
  }

  /** Append one delivery; see appendAll. */
  append(d: Omit<Delivery, 'seq'>): Recorded {
    return this.appendAll([d])[0]!;
  }

  /**
   * Append a forward try's entry (a line `{"forward":{…}}`, which readers of deliveries skip), synced with
   * the deliveries. Throws on a write error; once the file is closed, writes nothing.
   */
  appendForward(entry: ForwardEntry): void {
    if (this.closed) return;
    this.writeLines([[`${forwardLineJson(entry)}\n`]]);
    this.dirty = true;
    this.scheduleSync();
  }

  /**
   * Make sure a sync will cover what was appended: none is started while one runs (its end schedules the
   * next), and none sooner than syncIntervalMs after the last one started. When the interval has already run
   * out, it starts in the next turn, right after the 200s of this one go out.
   */
  private scheduleSync(): void {
    if (this.scheduled || this.syncing || this.closed) return;
    this.scheduled = true;
    const start = () => {
      this.scheduled = false;
      this.startSync();
    };
    const wait = this.lastSyncAt + this.syncIntervalMs - this.clock.now();
    if (wait <= 0) setImmediate(start);
    else void this.clock.sleep(wait, this.closing.signal).then(start);
  }

  /**
   * Start an fdatasync of what was appended, unless one is running. Nothing waits here, so a burst under
   * sustained load leaves no waiter behind (each one woken at every sync, until the load stopped, made that
   * cost grow with the run).
   */
  private startSync(): void {
    if (this.syncing || !this.dirty || this.closed) return;
    this.dirty = false;
    this.lastSyncAt = this.clock.now();
    const sync = new Promise<void>((resolve, reject) => fdatasync(this.fd, (err) => (err ? reject(err) : resolve())));
    this.syncing = sync;
    // A failure reaches whoever flushes (flush, close); what was appended meanwhile is scheduled either way.
    const next = () => {
      this.syncing = undefined;
      if (this.dirty) this.scheduleSync();
    };
    sync.then(next, next);
  }

  /** Resolve once everything appended so far is on disk (fdatasync), started now whatever the interval. */
  async flush(): Promise<void> {
    while (!this.closed && (this.syncing || this.dirty)) {
      this.startSync();
      await this.syncing;
    }
  }

  /** Flush and close. */
  async close(): Promise<void> {
    await this.flush();
    this.closed = true;
    // A sync waiting for the interval has nothing left to cover: its timer must not hold the process.
    this.closing.abort();
    closeSync(this.fd);
  }
}
