// What ends a line in an input file, for every reader of it: CRLF, LF or a lone CR (old Mac), in any mix
// within one file, each one line break (a CRLF is one, not two). csv-parse on its own detects one record
// delimiter from the first line and keeps it: a CRLF header with LF rows would merge the rows into one
// value, an LF header with CRLF rows would leave `\r` on the last value. So the input is split here, once,
// by this rule: the CSV framer (csv-frame.ts) and the NDJSON reader split text with LineSplitter, the
// delimiter is detected on firstLine, and the pre-scan (scan.ts), which counts bytes, uses endsLine and
// countLineBreaks.

/** The line breaks, longest first: a CR followed by an LF is one break. */
const BREAK = /\r\n|\n|\r/g;

const CR = 0x0d;
const LF = 0x0a;

/**
 * Splits streamed text into lines, each with the break that ended it. A CR at the end of a chunk waits for
 * the next one (it may be the first half of a CRLF split across two chunks); `end` takes it as a break.
 */
export class LineSplitter {
  private rest = '';
  private readonly re = new RegExp(BREAK);

  /** Calls `line` for every line `text` completes, in order; the unfinished rest is kept for the next call. */
  push(text: string, line: (text: string, eol: string) => void): void {
    const buffered = this.rest === '' ? text : this.rest + text;
    const re = this.re;
    re.lastIndex = 0;
    let start = 0;
    for (let brk = re.exec(buffered); brk !== null; brk = re.exec(buffered)) {
      if (brk.index === buffered.length - 1 && brk[0] === '\r') break;
      line(buffered.slice(start, brk.index), brk[0]);
      start = brk.index + brk[0].length;
    }
    this.rest = start === 0 ? buffered : buffered.slice(start);
  }

  /** The end of the input: what is left is the last line (ended by its CR, if that is what it ends with). */
  end(line: (text: string, eol: string) => void): void {
    const rest = this.rest;
    this.rest = '';
    if (rest === '') return;
    if (rest.charCodeAt(rest.length - 1) === CR) line(rest.slice(0, -1), '\r');
    else line(rest, '');
  }

  /** Characters of the unfinished line held back. */
  get pending(): number {
    return this.rest.length;
  }

  /** Drop the unfinished line (it is over a limit); a CR ending it is kept, so a CRLF still counts once. */
  discard(): void {
    this.rest = this.rest.charCodeAt(this.rest.length - 1) === CR ? '\r' : '';
  }
}

/** The text before the first line break, or undefined while `text` holds none. */
export function firstLine(text: string): string | undefined {
  const m = /[\r\n]/.exec(text);
  return m === null ? undefined : text.slice(0, m.index);
}

/**
 * Whether `bytes[i]` ends a line in an ASCII-compatible encoding, `before` being the byte before `bytes`
 * (the previous chunk's last; LF at the start of the input): every CR does, and an LF unless it completes
 * a CRLF. The byte before is read only for an LF, which keeps the pre-scan's byte loop as fast as before.
 */
export function endsLine(bytes: Uint8Array, i: number, before: number): boolean {
  const b = bytes[i];
  return b === CR || (b === LF && (i === 0 ? before : bytes[i - 1]) !== CR);
}

/** The line breaks in `bytes[0, end)`, `before` being the byte before `bytes` (LF at the start of the input). */
export function countLineBreaks(bytes: Uint8Array, end: number, before: number): number {
  let n = 0;
  for (let i = 0; i < end; i++) if (endsLine(bytes, i, before)) n++;
  return n;
}
