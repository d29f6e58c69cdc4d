// Display width of terminal text, and cutting it to a width: by grapheme cluster (a flag, an emoji ZWJ
// sequence, a letter with its combining marks is one unit, never split) and by the columns a terminal
// gives it (CJK and emoji two, combining marks none), as measured by string-width.
import stringWidth from 'string-width';
import type { OutStream } from '../context.js';

const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });
const ELLIPSIS = '…';

const ASCII = /^[\u0020-\u007e]*$/;
/**
 * What makes a cluster of more than one code point, or a width other than the code point's own: marks,
 * joiners and other invisible characters, emoji (pictographs, modifiers, flags), Hangul jamo, Prepend
 * letters, controls and lone surrogates. Text without any is one cluster per code point.
 */
const COMPLEX =
  /[\p{M}\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}\p{Extended_Pictographic}\p{Emoji_Modifier}\p{Regional_Indicator}\p{Surrogate}\u1100-\u11ff\ua960-\ua97f\ud7b0-\ud7ff\uff9e\uff9f\u0d4e\u{111c2}\u{111c3}\u{1193f}\u{11941}\u{11a3a}\u{11a84}-\u{11a89}\u{11d46}\u{11f02}]/u;
// Intl.Segmenter costs ~30 µs a short string on Node 20 (2,000 rows of 30 CJK cells: seconds), so text
// of one cluster per code point is measured code point by code point, each width asked once.
const codePointWidths = new Map<number, number>();

function codePointWidth(char: string): number {
  const cp = char.codePointAt(0)!;
  let w = codePointWidths.get(cp);
  if (w === undefined) {
    w = stringWidth(char);
    codePointWidths.set(cp, w);
  }
  return w;
}

/** Columns `text` takes on a terminal (text already made safe by terminalText: no escape sequences). */
export function displayWidth(text: string): number {
  if (ASCII.test(text)) return text.length;
  if (COMPLEX.test(text)) return stringWidth(text);
  let w = 0;
  for (const char of text) w += codePointWidth(char);
  return w;
}

/** The grapheme clusters of `text` with their display widths. */
function* clusters(text: string): Iterable<{ text: string; width: number }> {
  if (!COMPLEX.test(text)) {
    for (const char of text) yield { text: char, width: codePointWidth(char) };
    return;
  }
  for (const { segment } of segmenter.segment(text)) yield { text: segment, width: stringWidth(segment) };
}

/** Terminal width when the stream does not say (not a TTY, or a pty reporting 0 columns). */
export const DEFAULT_COLUMNS = 80;

/** The terminal width of `stream`, or DEFAULT_COLUMNS when it does not say. */
export function terminalColumns(stream: OutStream): number {
  return stream.columns && stream.columns > 0 ? stream.columns : DEFAULT_COLUMNS;
}

/** `text` cut to at most `width` columns, ending in `…` when it was cut; never inside a cluster. */
export function truncateText(text: string, width: number): string {
  if (displayWidth(text) <= width) return text;
  if (width <= 0) return '';
  let out = '';
  let used = 0;
  for (const c of clusters(text)) {
    if (used + c.width > width - 1) break;
    out += c.text;
    used += c.width;
  }
  return out + ELLIPSIS;
}

/** One line broken at cluster boundaries into pieces of at most `width` columns (an id that must stay whole). */
export function breakText(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  let used = 0;
  for (const c of clusters(text)) {
    if (used + c.width > width && line !== '') {
      lines.push(line);
      line = '';
      used = 0;
    }
    line += c.text;
    used += c.width;
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
      const w = displayWidth(token);
      if (token.startsWith(' ')) {
        if (used + w <= width) {
          line += token;
          used += w;
        } else if (used > 0) flush();
        continue;
      }
      if (used + w <= width) {
        line += token;
        used += w;
        continue;
      }
      if (w <= width) {
        flush();
        line = token;
        used = w;
        continue;
      }
      for (const c of clusters(token)) {
        if (used + c.width > width && used > 0) flush();
        line += c.text;
        used += c.width;
      }
    }
    out.push(line.trimEnd());
  }
  return out;
}
