// Record framing in front of csv-parse (issue 10 §5). csv-parse cannot resynchronise: an unclosed quote
// swallows the rest of the file, and a record over the size limit is reported again and again. This splits
// the text into physical lines, follows the quote state the way csv-parse reads it (a quote opens a quoted
// field only at the field's start; "" inside it is a quote), and hands csv-parse only whole records, each
// with its starting line. A record still open past the size limit or at the end of the input is rejected by
// its first line, and reading starts again at the line after it. Written by hand: no CSV library frames
// records this way, and it needs only the quote rule, not a parser.

/** A whole record for the parser, or lines rejected before parsing. */
export type Frame =
  | { kind: 'record'; line: number; text: string }
  | { kind: 'bad'; line: number; reason: string };

interface Line {
  no: number;
  text: string;
  /** The line break that ended it ('' for the last line of the input). */
  eol: string;
}

/** Characters of a rejected line kept in its reason (and so in the rejects file, to be fixed there). */
const SHOWN = 2000;
const shown = (text: string) => JSON.stringify(text.length > SHOWN ? `${text.slice(0, SHOWN)}…` : text);

/** Splits decoded text into records; `push` and `end` return what is ready, in file order. */
export class RecordFramer {
  private carry = '';
  private lineNo = 0;
  /** A physical line over the limit is being dropped until its line break. */
  private dropping: number | undefined;
  private open: Line[] = [];
  private chars = 0;
  private inQuote = false;
  private atFieldStart = true;
  private out: Frame[] = [];

  constructor(
    private readonly delimiter: string,
    private readonly maxChars: number,
  ) {}

  push(text: string): Frame[] {
    let s = this.carry + text;
    this.carry = '';
    const eol = /\r\n|\n|\r/g;
    let start = 0;
    for (let m = eol.exec(s); m !== null; m = eol.exec(s)) {
      // A CR at the very end may be the first half of a CRLF split across two chunks.
      if (m[0] === '\r' && m.index === s.length - 1) break;
      this.line(s.slice(start, m.index), m[0]);
      start = m.index + m[0].length;
    }
    s = s.slice(start);
    if (this.dropping === undefined && s.length > this.maxChars) this.oversize(this.lineNo + 1);
    if (this.dropping === undefined) this.carry = s;
    return this.take();
  }

  end(): Frame[] {
    if (this.carry !== '' || this.dropping !== undefined) this.line(this.carry, '');
    this.carry = '';
    while (this.open.length > 0) this.abandon('unclosed quote: the record never ends');
    return this.take();
  }

  private take(): Frame[] {
    const out = this.out;
    this.out = [];
    return out;
  }

  private line(text: string, eol: string): void {
    this.lineNo++;
    if (this.dropping !== undefined) {
      this.out.push({ kind: 'bad', line: this.dropping, reason: `line ${this.dropping} is over ${this.maxChars.toLocaleString('en')} characters; not read` });
      this.dropping = undefined;
      return;
    }
    this.feed({ no: this.lineNo, text, eol });
  }

  /** A physical line too long to keep: anything open before it is abandoned, then the line is dropped. */
  private oversize(no: number): void {
    while (this.open.length > 0) this.abandon(`the record reached ${this.maxChars.toLocaleString('en')} characters (unclosed quote?)`);
    this.dropping = no;
  }

  private feed(l: Line): void {
    // Most lines hold no quote and start no record of their own lines: a whole record at once.
    if (this.open.length === 0 && !l.text.includes('"') && l.text.length + l.eol.length <= this.maxChars) {
      this.out.push({ kind: 'record', line: l.no, text: l.text + l.eol });
      return;
    }
    if (this.open.length === 0) {
      this.inQuote = false;
      this.atFieldStart = true;
      this.chars = 0;
    }
    this.open.push(l);
    this.chars += l.text.length + l.eol.length;
    const t = l.text;
    for (let i = 0; i < t.length; i++) {
      const ch = t[i];
      if (this.inQuote) {
        if (ch === '"') {
          if (t[i + 1] === '"') i++;
          else this.inQuote = false;
        }
      } else if (ch === this.delimiter) this.atFieldStart = true;
      else {
        if (ch === '"' && this.atFieldStart) this.inQuote = true;
        this.atFieldStart = false;
      }
    }
    if (!this.inQuote) {
      const lines = this.open;
      this.open = [];
      if (this.chars > this.maxChars) {
        this.out.push({ kind: 'bad', line: lines[0]!.no, reason: `the record of lines ${lines[0]!.no}-${l.no} is over ${this.maxChars.toLocaleString('en')} characters; not read` });
      } else {
        this.out.push({ kind: 'record', line: lines[0]!.no, text: lines.map((x) => x.text + x.eol).join('') });
      }
      return;
    }
    // A quoted field runs on to the next line; past the limit it is an unclosed quote, not data.
    this.atFieldStart = false;
    if (this.chars > this.maxChars) this.abandon(`the record reached ${this.maxChars.toLocaleString('en')} characters (unclosed quote?)`);
  }

  /** Reject the open record by its first line, and read again from the line after it. */
  private abandon(why: string): void {
    const [first, ...rest] = this.open;
    this.open = [];
    this.out.push({ kind: 'bad', line: first!.no, reason: `${why}: line ${first!.no} could not be read as a record: ${shown(first!.text)}` });
    for (const l of rest) this.feed(l);
  }
}
