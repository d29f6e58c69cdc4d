// Display width of terminal text, and cutting it to a width: by grapheme cluster (a flag, an emoji ZWJ
// sequence, a letter with its combining marks is one unit, never split) and by the columns a terminal
// gives it (CJK and emoji two, combining marks none), as measured by string-width.
import { createRequire } from 'node:module';
import type { OutStream } from './streams.js';

type StringWidth = typeof import('string-width').default;
type EastAsianWidth = typeof import('get-east-asian-width').eastAsianWidth;

// string-width and a grapheme Intl.Segmenter are slow to load (each builds a segmenter, which loads
// ICU's break rules): this module is on the path of every error line and `--help`, so both are made when
// text that needs them is measured, and printable ASCII never does. A synchronous require of the ES module
// (Node >= 20.19, the engines' floor) keeps every function here synchronous; Node's module cache holds the
// module after the first require, so this module keeps nothing.
const load = createRequire(import.meta.url);

function stringWidthOf(): StringWidth {
  return (load('string-width') as { default: StringWidth }).default;
}

/**
 * The columns of one code point of text without clusters (see isComplex): its East Asian Width, 2 for wide
 * and fullwidth, else 1, as string-width measures such a code point (the function string-width itself uses).
 */
function codePointWidthOf(): EastAsianWidth {
  return (load('get-east-asian-width') as { eastAsianWidth: EastAsianWidth }).eastAsianWidth;
}

/**
 * Grapheme clusters of `text`. A segmenter is made per text: it costs tens of microseconds, once string-width
 * has loaded ICU's rules, and only text with clusters (see isComplex) is segmented at all.
 */
function graphemes(text: string): Intl.Segments {
  return new Intl.Segmenter(undefined, { granularity: 'grapheme' }).segment(text);
}

const ELLIPSIS = '…';

const ASCII = /^[\u0020-\u007e]*$/;
/**
 * What makes a cluster of more than one code point, or a width other than the code point's own: marks,
 * joiners and other invisible characters, emoji (pictographs, modifiers, flags), Hangul jamo, Prepend
 * letters, controls and lone surrogates. Text without any is one cluster per code point.
 */
function isComplex(text: string): boolean {
  // A literal inside the function: V8 parses it on the first call, not at load (a class of Unicode properties
  // reads ICU's sets, and most runs, `--help` among them, never measure text that is not ASCII), then reuses it.
  return /[\p{M}\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}\p{Extended_Pictographic}\p{Emoji_Modifier}\p{Regional_Indicator}\p{Surrogate}\u1100-\u11ff\ua960-\ua97f\ud7b0-\ud7ff\uff9e\uff9f\u0d4e\u{111c2}\u{111c3}\u{1193f}\u{11941}\u{11a3a}\u{11a84}-\u{11a89}\u{11d46}\u{11f02}]/u.test(text);
}

/** Columns `text` takes on a terminal (text already made safe by terminalText: no escape sequences). */
export function displayWidth(text: string): number {
  if (ASCII.test(text)) return text.length;
  if (isComplex(text)) return stringWidthOf()(text);
  // Code point by code point: string-width runs Intl.Segmenter on every call, which costs far more than the
  // lookup of each code point's width, and a table of CJK text measures every cell.
  const width = codePointWidthOf();
  let w = 0;
  for (const char of text) w += width(char.codePointAt(0)!);
  return w;
}

/** The grapheme clusters of `text` with their display widths. */
function* clusters(text: string): Iterable<{ text: string; width: number }> {
  if (!isComplex(text)) {
    const width = codePointWidthOf();
    for (const char of text) yield { text: char, width: width(char.codePointAt(0)!) };
    return;
  }
  const width = stringWidthOf();
  for (const { segment } of graphemes(text)) yield { text: segment, width: width(segment) };
}

/** Terminal width when the stream does not say (not a TTY, or a pty reporting 0 columns). */
const DEFAULT_COLUMNS = 80;

/** The terminal width of `stream`, or DEFAULT_COLUMNS when it does not say. */
export function terminalColumns(stream: OutStream): number {
  return stream.columns && stream.columns > 0 ? stream.columns : DEFAULT_COLUMNS;
}

/**
 * `text` cut to at most `maxColumns` columns, ending in `…` (counted in the width) when it was cut: the one
 * way cardboard shortens text for people. Never inside a grapheme cluster, so never between the halves of a
 * surrogate pair nor between a letter and its marks; spaces before the `…` are dropped. Reads only as far as
 * the cut (a long error body is not measured whole). `show` maps each cluster to what is printed for it (its
 * escape: terminalText's `maxColumns` passes one), which is measured, and kept or dropped whole.
 */
export function shorten(text: string, maxColumns: number, show?: (cluster: string) => string): string {
  if (show === undefined && ASCII.test(text)) {
    if (text.length <= maxColumns) return text;
    return maxColumns <= 0 ? '' : text.slice(0, maxColumns - 1).trimEnd() + ELLIPSIS;
  }
  // What is printed so far: a prefix of `text` (its length in `end`) unless `show` changes clusters.
  let out = show === undefined ? undefined : '';
  let end = 0;
  // Where the longest printed part that leaves a column for the ellipsis ends.
  let fits = -1;
  let used = 0;
  for (const cluster of clusters(text)) {
    const shown = show === undefined ? cluster.text : show(cluster.text);
    used += shown === cluster.text ? cluster.width : displayWidth(shown);
    if (fits < 0 && used > maxColumns - 1) fits = out === undefined ? end : out.length;
    if (used > maxColumns) return maxColumns <= 0 ? '' : (out ?? text).slice(0, fits).trimEnd() + ELLIPSIS;
    if (out !== undefined) out += shown;
    end += cluster.text.length;
  }
  return out ?? text;
}

/**
 * `text` cut to at most `maxColumns` columns in the middle: its start and its end kept (about half each), `…`
 * between them, never inside a grapheme cluster. For a URL, whose host and last path segment say the most.
 */
export function shortenMiddle(text: string, maxColumns: number): string {
  if (displayWidth(text) <= maxColumns) return text;
  if (maxColumns <= 1) return maxColumns === 1 ? ELLIPSIS : '';
  const all = [...clusters(text)];
  const room = maxColumns - 1;
  let headWidth = 0;
  let head = 0;
  while (head < all.length && headWidth + all[head]!.width <= Math.ceil(room / 2)) headWidth += all[head++]!.width;
  let tailWidth = 0;
  let tail = all.length;
  while (tail > head && tailWidth + all[tail - 1]!.width <= room - headWidth) tailWidth += all[--tail]!.width;
  const join = (from: number, to: number) => all.slice(from, to).map((c) => c.text).join('');
  return `${join(0, head)}${ELLIPSIS}${join(tail, all.length)}`;
}

/** One line broken at cluster boundaries into pieces of at most `width` columns (an id that must stay whole). */
export function breakText(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  let used = 0;
  for (const cluster of clusters(text)) {
    if (used + cluster.width > width && line !== '') {
      lines.push(line);
      line = '';
      used = 0;
    }
    line += cluster.text;
    used += cluster.width;
  }
  lines.push(line);
  return lines;
}

/**
 * `text` wrapped to lines of at most `width` columns: its own line breaks kept, other breaks at spaces
 * (the space at a break is dropped); a word longer than a line (a URL, CJK text, which has no spaces) fills
 * the line and goes on on the next, broken between clusters, so no character is lost or split.
 */
export function wrapText(text: string, width: number): string[] {
  const out: string[] = [];
  for (const source of text.split('\n')) {
    let line = '';
    let used = 0;
    const flush = () => {
      out.push(line.trimEnd());
      line = '';
      used = 0;
    };
    for (const token of source.match(/ +|[^ ]+/g) ?? ['']) {
      const tokenWidth = displayWidth(token);
      if (token.startsWith(' ')) {
        if (used + tokenWidth <= width) {
          line += token;
          used += tokenWidth;
        } else if (used > 0) flush();
        continue;
      }
      if (used + tokenWidth <= width) {
        line += token;
        used += tokenWidth;
        continue;
      }
      if (tokenWidth <= width) {
        flush();
        line = token;
        used = tokenWidth;
        continue;
      }
      for (const cluster of clusters(token)) {
        if (used + cluster.width > width && used > 0) flush();
        line += cluster.text;
        used += cluster.width;
      }
    }
    out.push(line.trimEnd());
  }
  return out;
}
