// Written by hand rather than with a library: RFC 4180 quoting is about 20 lines and csv-stringify
// is not among our dependencies. csv-parse (used by `import`) reads what this writes.
import { valueText } from './text.js';

const NEEDS_QUOTES = /[",\r\n]/;

/** One CSV field per RFC 4180: quoted when it holds a comma, quote, CR or LF; inner quotes doubled. */
export function csvField(value: unknown): string {
  const text = valueText(value);
  // Leading/trailing spaces are quoted too, so a reader that trims unquoted fields keeps them.
  if (NEEDS_QUOTES.test(text) || text !== text.trim()) return `"${text.replace(/"/g, '""')}"`;
  return text;
}

/** One CSV record terminated by CRLF (RFC 4180 section 2.1). */
export function csvRow(values: readonly unknown[]): string {
  return `${values.map(csvField).join(',')}\r\n`;
}
