import { closeSync, openSync, readSync, statSync } from 'node:fs';
import type { DeliveryChange, CardStates } from './changes.js';
import type { Delivery } from './delivery.js';
import type { ForwardEntry } from './forward-entry.js';
import { readDeliveries } from './record-file.js';

/** How much of the end of a record file is read to learn the cards' last states (and the inspector's history). */
const HISTORY_BYTES = 32 * 1024 * 1024;

/** A forward entry's line starts so (record-file.ts); a delivery's starts `{"seq":`. */
const FORWARD_START = Buffer.from('{"forward":', 'latin1');
/** Longer than any forward entry's line (a 4 KiB body and the answer's headers): a longer line is a delivery's. */
const FORWARD_LINE_MAX = 1024 * 1024;
/** How far back the history's start is looked for, whatever the forward entries: a bound on the bytes read at start. */
const HISTORY_SCAN_BYTES = 8 * HISTORY_BYTES;

/**
 * The offset the history is read from: the start of the oldest line such that the delivery lines from it
 * to the end come to at most `tailBytes`. Forward entries do not count: an app down for hours adds a line a
 * try (4 KiB of its error page each), and counted they would push out of the history the very deliveries
 * still waiting for that app, whose routes must be decided against the cards' states they arrived to.
 * Scanned backwards by hand in 1 MiB reads, at most `scanBytes` back (then from the first line that
 * starts in them).
 */
function historyStart(path: string, size: number, tailBytes: number, scanBytes: number): number {
  if (size <= tailBytes) return 0;
  const floor = Math.max(0, size - Math.max(scanBytes, tailBytes));
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.alloc(1024 * 1024);
    const head = Buffer.alloc(FORWARD_START.length);
    // Whether the line at `start` is a forward entry's: its first bytes are in `buf` (read at `from`, `n` bytes) or read again.
    const isForward = (start: number, from: number, n: number): boolean => {
      if (start + head.length <= from + n) return buf.subarray(start - from, start - from + head.length).equals(FORWARD_START);
      return readSync(fd, head, 0, head.length, start) === head.length && head.equals(FORWARD_START);
    };
    let counted = 0;
    // The start of the oldest line seen whole (the end of the one being scanned back through).
    let lineEnd = size;
    for (let pos = size; pos > floor; ) {
      const from = Math.max(floor, pos - buf.length);
      const n = readSync(fd, buf, 0, pos - from, from);
      for (let i = n - 1; i >= 0; i--) {
        if (buf[i] !== 0x0a) continue;
        const start = from + i + 1;
        if (start < lineEnd && !isForward(start, from, n)) {
          counted += lineEnd - start;
          if (counted > tailBytes) return lineEnd;
        }
        lineEnd = start;
      }
      pos = from;
      // A line longer than any forward entry's is a delivery's: no need to find its start to know it does not fit.
      if (lineEnd - pos > FORWARD_LINE_MAX && counted + (lineEnd - pos) > tailBytes) return lineEnd;
    }
    // The file's first line, when the scan reached it.
    if (floor === 0 && lineEnd > 0 && !isForward(0, 0, 0) && counted + lineEnd > tailBytes) return lineEnd;
    return floor === 0 ? 0 : lineEnd;
  } finally {
    closeSync(fd);
  }
}

/**
 * Feed the deliveries recorded in `path` through `states`, oldest first, so the first delivery of this run
 * is shown as a change to what was recorded before. Only the last `tailBytes` of deliveries are read
 * (historyStart: forward entries do not count, looked for at most `scanBytes` back): the states are
 * bounded anyway, and a record file can be far larger than memory. `visit` sees each delivery
 * with its change; `onForward` the last forward entry read of each delivery (the app's answer to its last
 * try), after the delivery it is about when that one was read (its entries follow its line in the file). Returns the number of
 * deliveries read; a missing file has none.
 */
export function readHistory(
  path: string,
  states: CardStates,
  visit?: (d: Delivery, change: DeliveryChange) => void,
  tailBytes = HISTORY_BYTES,
  onForward?: (entry: ForwardEntry) => void,
  scanBytes = HISTORY_SCAN_BYTES,
): number {
  let size: number;
  try {
    size = statSync(path).size;
  } catch {
    return 0;
  }
  let read = 0;
  for (let offset = historyStart(path, size, tailBytes, scanBytes); offset < size; ) {
    // A batch's forward entries are told after its deliveries, so each finds the delivery it is about; only
    // the last of each delivery's (what an entry shows), or the thousands of tries of a long outage would all
    // be held at once.
    const forwards = new Map<number, ForwardEntry>();
    const batch = readDeliveries(path, offset, 0, 500, 8 * 1024 * 1024, onForward && ((f) => forwards.set(f.seq, f)));
    if (batch.next === offset) break;
    offset = batch.next;
    for (const delivery of batch.deliveries) {
      read++;
      const change = states.apply(delivery.body);
      visit?.(delivery, change);
    }
    for (const f of forwards.values()) onForward?.(f);
  }
  return read;
}
