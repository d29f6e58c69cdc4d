import type { OutStream } from '../../context.js';

/** Lines for one stream, gathered during an event-loop turn and written together. */
interface BatchedOutput {
  /** Queue one line (without its newline); it is written at the end of this turn at the latest. */
  line(text: string): void;
  /** Write whatever is queued now (before exit, or before writing to the stream directly). */
  flush(): void;
}

/**
 * Gather the lines of one event-loop turn and write them with one call. Under load a turn answers many
 * deliveries; process.stdout to a pipe or file writes synchronously, so one write per delivery costs a
 * system call each and wakes the reader (jq, cat) each time. setImmediate runs right after the turn's
 * I/O, so a line waits for nothing but the other deliveries that arrived with it.
 */
export function batchedOutput(stream: OutStream): BatchedOutput {
  let queued = '';
  const flush = () => {
    if (queued === '') return;
    const text = queued;
    queued = '';
    stream.write(text);
  };
  return {
    line(text) {
      if (queued === '') setImmediate(flush);
      queued += `${text}\n`;
    },
    flush,
  };
}
