// Display width of terminal text, and cutting it to a width: by grapheme cluster (a flag, an emoji ZWJ
// sequence, a letter with its combining marks is one unit, never split) and by the columns a terminal
// gives it (CJK and emoji two, combining marks none), as measured by string-width.
import stringWidth from 'string-width';

const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });
const ELLIPSIS = '…';

/** Columns `text` takes on a terminal (text already made safe by terminalText: no escape sequences). */
export function displayWidth(text: string): number {
  return stringWidth(text);
}

/** The grapheme clusters of `text` with their display widths. */
function* clusters(text: string): Iterable<{ text: string; width: number }> {
  for (const { segment } of segmenter.segment(text)) yield { text: segment, width: stringWidth(segment) };
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
