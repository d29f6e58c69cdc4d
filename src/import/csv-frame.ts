// Record framing in front of csv-parse. csv-parse cannot resynchronise: an unclosed quote
// swallows the rest of the file, and a record over the size limit is reported again and again. This splits
// the text into physical lines (lines.ts: CRLF, LF or CR, in any mix), follows the quote state the way
// csv-parse reads it (a quote opens a quoted field only at the field's start; "" inside it is a quote), and
// hands csv-parse only whole records, each with its starting line. A record still open past the size limit
// or at the end of the input is rejected by its first line, and reading starts again at the line after it.
// Written by hand: no CSV library frames records this way, and it needs only the quote rule, not a parser.
//
// Every record handed on ends in exactly one LF, whatever ended it in the file, so csv-parse reads with
// `record_delimiter: '\n'` and never guesses one (it would fix the first line's, and a file mixing
// line ends lost rows or kept `\r` in values). A line break inside a quoted field is data and stays as written.

import { shorten } from '../io/width.js';
import { LineSplitter } from './lines.js';

/** A whole record for the parser (its text ends in one LF), or lines rejected before parsing. */
type Frame =
  | { kind: 'record'; line: number; text: string }
  | { kind: 'bad'; line: number; reason: string };

interface Line {
  no: number;
  text: string;
  /** The line break that ended it ('' for the last line of the input). */
  eol: string;
}

/** Columns of a rejected line kept in its reason (and so in the rejects file, to be fixed there). */
const SHOWN = 2000;
const shown = (text: string) => JSON.stringify(shorten(text, SHOWN));

/** Splits decoded text into records; `push` and `end` return what is ready, in file order. */
export class RecordFramer {
  private readonly lines = new LineSplitter();
  private readonly onLine = (text: string, eol: string) => this.line(text, eol);
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
    this.lines.push(text, this.onLine);
    if (this.dropping === undefined && this.lines.pending > this.maxChars) this.oversize(this.lineNo + 1);
    if (this.dropping !== undefined) this.lines.discard();
    return this.take();
  }

  end(): Frame[] {
    this.lines.end(this.onLine);
    if (this.dropping !== undefined) this.line('', '');
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
    // Most lines hold no quote and start no record of their own lines: a whole record at once, no Line kept.
    if (this.open.length === 0 && !text.includes('"') && text.length + eol.length <= this.maxChars) {
      this.out.push({ kind: 'record', line: this.lineNo, text: `${text}\n` });
      return;
    }
    this.feed({ no: this.lineNo, text, eol });
  }

  /** A physical line too long to keep: anything open before it is abandoned, then the line is dropped. */
  private oversize(no: number): void {
    while (this.open.length > 0) this.abandon(`the record reached ${this.maxChars.toLocaleString('en')} characters (unclosed quote?)`);
    this.dropping = no;
  }

  private feed(line: Line): void {
    // Most lines hold no quote and start no record of their own lines: a whole record at once.
    if (this.open.length === 0 && !line.text.includes('"') && line.text.length + line.eol.length <= this.maxChars) {
      this.out.push({ kind: 'record', line: line.no, text: `${line.text}\n` });
      return;
    }
    if (this.open.length === 0) {
      this.inQuote = false;
      this.atFieldStart = true;
      this.chars = 0;
    }
    this.open.push(line);
    this.chars += line.text.length + line.eol.length;
    const lineText = line.text;
    for (let i = 0; i < lineText.length; i++) {
      const ch = lineText[i];
      if (this.inQuote) {
        if (ch === '"') {
          if (lineText[i + 1] === '"') i++;
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
        this.out.push({ kind: 'bad', line: lines[0]!.no, reason: `the record of lines ${lines[0]!.no}-${line.no} is over ${this.maxChars.toLocaleString('en')} characters; not read` });
      } else {
        // The breaks between its lines are inside quotes: data, kept as written. The last one ends the record.
        let text = '';
        for (let i = 0; i < lines.length - 1; i++) text += lines[i]!.text + lines[i]!.eol;
        this.out.push({ kind: 'record', line: lines[0]!.no, text: `${text}${line.text}\n` });
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
