import { closeSync, openSync, readSync, statSync } from 'node:fs';
import type { DeliveryChange, CardStates } from './changes.js';
import type { Delivery } from './delivery.js';
import type { ForwardEntry } from './forward-entry.js';
import { readDeliveries } from './record-file.js';

/** How much of the end of a record file is read to learn the cards' last states (and the inspector's history). */
const HISTORY_BYTES = 32 * 1024 * 1024;

/**
 * The offset of the first line that starts at or after `at` (the file's size when none does). Scanned for
 * the newline by hand rather than with readLinesSync, which would gather the line `at` falls in whole: in
 * a record file that can be a 100 MB body's line.
 */
function lineStartAfter(path: string, at: number, size: number): number {
  if (at <= 0) return 0;
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.alloc(64 * 1024);
    // The byte before `at` tells whether `at` already starts a line.
    for (let pos = at - 1; pos < size; ) {
      const bytesRead = readSync(fd, buf, 0, buf.length, pos);
      if (bytesRead === 0) break;
      const nl = buf.subarray(0, bytesRead).indexOf(0x0a);
      if (nl !== -1) return pos + nl + 1;
      pos += bytesRead;
    }
    return size;
  } finally {
    closeSync(fd);
  }
}

/**
 * Feed the deliveries recorded in `path` through `states`, oldest first, so the first delivery of this run
 * is shown as a change to what was recorded before. Only the last `tailBytes` of the file are read: the
 * states are bounded anyway, and a record file can be far larger than memory. `visit` sees each delivery
 * with its change; `onForward` each forward entry read (the app's answer to a try), after the delivery it
 * is about when that one was read (its entries follow its line in the file). Returns the number of
 * deliveries read; a missing file has none.
 */
export function readHistory(
  path: string,
  states: CardStates,
  visit?: (d: Delivery, change: DeliveryChange) => void,
  tailBytes = HISTORY_BYTES,
  onForward?: (entry: ForwardEntry) => void,
): number {
  let size: number;
  try {
    size = statSync(path).size;
  } catch {
    return 0;
  }
  let read = 0;
  for (let offset = lineStartAfter(path, size - tailBytes, size); offset < size; ) {
    // A batch's forward entries are told after its deliveries, so each finds the delivery it is about.
    const forwards: ForwardEntry[] = [];
    const batch = readDeliveries(path, offset, 0, 500, 8 * 1024 * 1024, onForward && ((f) => forwards.push(f)));
    if (batch.next === offset) break;
    offset = batch.next;
    for (const delivery of batch.deliveries) {
      read++;
      const change = states.apply(delivery.body);
      visit?.(delivery, change);
    }
    for (const f of forwards) onForward?.(f);
  }
  return read;
}
