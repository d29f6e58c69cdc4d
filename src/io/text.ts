import { shorten } from './width.js';

/**
 * `1234567` → `1,234,567`, by hand: toLocaleString's first call sets up ICU's number formatting, whose
 * memory a run then keeps to its end, for a count that needs only a comma every three digits.
 */
export function groupDigits(x: number): string {
  return String(x).replace(/\B(?=(\d{3})+$)/g, ',');
}

/**
 * A count and its noun for people, the one way every message says how many: `0 rows`, `1 row`, `2 rows`,
 * `1,200 deliveries`. `many` defaults to `one` + `s`; give it when the plural is irregular (`delivery`,
 * `deliveries`). The count is grouped by thousands (groupDigits).
 */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${groupDigits(n)} ${n === 1 ? one : many}`;
}

/** A value as one cell of text: strings as they are, null/undefined empty, anything else as JSON. */
export function valueText(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
}

/**
 * One tab-separated field. Tab, newline, carriage return and backslash are escaped as `\t`, `\n`, `\r`
 * and `\\`, so every record stays on one line with the same number of fields (for `cut`, `awk`, `while read`).
 */
export function tsvField(value: unknown): string {
  return valueText(value).replace(/[\\\t\n\r]/g, (c) => (c === '\\' ? '\\\\' : c === '\t' ? '\\t' : c === '\n' ? '\\n' : '\\r'));
}

/** One tab-separated line, newline included. */
export function tsvRow(values: readonly unknown[]): string {
  return `${values.map(tsvField).join('\t')}\n`;
}

/**
 * What a terminal must never receive raw from data: C0 controls, DEL and C1 controls (cursor moves,
 * retitles, erases: `ESC]0;…BEL`, `ESC[1A`, CSI as U+009B), the line and paragraph separators, lone
 * surrogates, and the invisible format characters (Unicode Cf: bidi overrides and isolates such as
 * U+202E, zero-width spaces, the BOM, tag characters) except U+200D, the zero-width joiner that emoji
 * sequences need. One alternation in one pass; the `keep` variant leaves LF alone.
 */
const UNSAFE = '[\\u0000-\\u001f\\u007f-\\u009f\\u2028\\u2029\\p{Cs}]|(?!\\u200d)\\p{Cf}';
// Keeping line breaks, a CR LF pair (a Windows line end) is one line break, not a visible `\r`.
const UNSAFE_KEEP_LF = '\\r\\n|[\\u0000-\\u0009\\u000b-\\u001f\\u007f-\\u009f\\u2028\\u2029\\p{Cs}]|(?!\\u200d)\\p{Cf}';

/**
 * A pattern as a regular expression, made at each use and never at load: parsing one of Unicode properties
 * reads ICU's sets, which a start-up that escapes nothing would pay for. V8 caches compiled patterns by source
 * and flags, so making one again costs well under a microsecond, and nothing is kept here (a global regular
 * expression's lastIndex is state).
 */
function pattern(source: string): RegExp {
  return new RegExp(source, 'gu');
}

const NAMED = new Map([
  ['\u0007', '\\a'],
  ['\b', '\\b'],
  ['\t', '\\t'],
  ['\n', '\\n'],
  ['\v', '\\v'],
  ['\f', '\\f'],
  ['\r', '\\r'],
  ['\u001b', '\\e'],
]);

function escapeOne(char: string): string {
  if (char === '\r\n') return '\n';
  const named = NAMED.get(char);
  if (named !== undefined) return named;
  const cp = char.codePointAt(0)!;
  if (cp <= 0xff) return `\\x${cp.toString(16).padStart(2, '0')}`;
  if (cp <= 0xffff) return `\\u${cp.toString(16).padStart(4, '0')}`;
  return `\\u{${cp.toString(16)}}`;
}

interface TerminalTextOptions {
  /** Keep line feeds (a multi-line error, a wrapped table cell; CR LF becomes LF); by default LF is shown as `\n`. */
  keepNewlines?: boolean;
  /**
   * Cut to this many columns (shorten), `…` included: an escape is counted and never cut in half (`\e`, not
   * `\…`). For one line, without keepNewlines.
   */
  maxColumns?: number;
}

/**
 * Text as a person's terminal may show it: every unsafe character (see UNSAFE) is written as an escape,
 * `\e` `\a` `\b` `\t` `\n` `\v` `\f` `\r` by name, `\x9b` up to U+00FF, `\u202e` in the BMP and
 * `\u{e0001}` beyond; cardboard's own colour codes are added after this, never passed through it.
 * Every line meant for a person goes through here (tables on a TTY, status, errors, progress, prompts,
 * listener lines, CSV cells on a terminal); machine formats on a pipe or in a file never do, so their data
 * stays exact (JSON on a terminal is escaped its own way: terminalJson in terminal-json.ts).
 *
 * A backslash is left as it is: a value holding the two characters `\e` then looks like one holding ESC.
 * That is the price of idempotence (escaping twice equals escaping once, so a line built from escaped
 * parts may pass through a sink that escapes again) and of showing Windows paths and regexes plainly;
 * anyone who needs the exact value asks for `--json`. Text without unsafe characters is returned as is
 * (no copy).
 */
export function terminalText(text: string, opts: TerminalTextOptions = {}): string {
  const unsafe = pattern(opts.keepNewlines ? UNSAFE_KEEP_LF : UNSAFE);
  // One pass; replace() resets lastIndex of a global regex, and returns `text` itself when nothing matched.
  const safe = text.replace(unsafe, escapeOne);
  if (opts.maxColumns === undefined) return safe;
  // Escaped cluster by cluster, so the cut falls between escapes: a character to escape is mostly a cluster of
  // its own, and one that joins a cluster (a tag character of an emoji flag, U+200C) goes or stays with it.
  return safe === text ? shorten(text, opts.maxColumns) : shorten(text, opts.maxColumns, (c) => c.replace(unsafe, escapeOne));
}

/**
 * A value printed as data on stdout (the `_id` of `card put`, a comment id, an answer's body): escaped on a terminal,
 * where a person reads it, and exact on a pipe or in a file, where a script takes it as it is.
 */
export function textFor(stream: { isTTY?: boolean }, text: string, opts: TerminalTextOptions = {}): string {
  return stream.isTTY ? terminalText(text, opts) : text;
}

/**
 * Any text as one short line for a person (a server's error message, the start of an app's answer): every
 * run of white space (line breaks, tabs, CR included) becomes one space, what terminalText escapes is
 * escaped, and the line is cut to `maxColumns` (shorten), the escapes counted and never cut in half.
 * Idempotent, like terminalText.
 */
export function oneLine(text: string, maxColumns: number): string {
  return terminalText(text.replace(/\s+/g, ' ').trim(), { maxColumns });
}

/**
 * A string in double quotes for a person (a text body, a CSV header in a question): its terminalText, so ESC
 * reads `\e` as on every other line; JSON.stringify, whose `\u001b` is JSON's spelling, is for data.
 */
export function quoted(text: string): string {
  return `"${terminalText(text)}"`;
}

const ANSI_C = `[\\\\']|${UNSAFE}`;

/**
 * A value as a bash/zsh ANSI-C quoted word, `$'…'`, for a command line cardboard prints for pasting
 * (a suggested `--map`): every unsafe character is an escape the shell turns back into it, so the line
 * is safe to show, stays one line, and pastes as the exact value. `\xHH` only below U+0080 (above, bash
 * would write a raw byte, not the character), `\uHHHH` and `\UHHHHHHHH` beyond (read back in a UTF-8 locale;
 * a NUL cannot be in a command's argument at all).
 */
export function ansiCQuote(value: string): string {
  const body = value.replace(pattern(ANSI_C), (sequence) => {
    if (sequence === '\\' || sequence === "'") return `\\${sequence}`;
    const named = NAMED.get(sequence);
    if (named !== undefined) return named;
    const cp = sequence.codePointAt(0)!;
    if (cp < 0x80) return `\\x${cp.toString(16).padStart(2, '0')}`;
    if (cp <= 0xffff) return `\\u${cp.toString(16).padStart(4, '0')}`;
    return `\\U${cp.toString(16).padStart(8, '0')}`;
  });
  return `$'${body}'`;
}
