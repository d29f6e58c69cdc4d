import { type PagerContext, writePaged } from './pager.js';
import { createStatus } from './status.js';
import { groupDigits, plural, terminalText, valueText } from './text.js';
import { type IoContext, type OutStream, useColor } from './streams.js';
import { breakText, displayWidth, shorten, terminalColumns, wrapText } from './width.js';

/** How a table fits the terminal. */
interface TableOptions {
  /**
   * A single record (`card get`): every cell is wrapped at word boundaries to its column, nothing is cut and
   * no column is dropped. Otherwise (a list) each row is one line and cells are cut with `…`.
   */
  wrap?: boolean;
  /** Headers of columns that are never cut (`_id`): their width is their widest cell. */
  keep?: readonly string[];
  /** Per column, a width (in columns) it is never shrunk below (the `_id` value of a record must stay on one line). */
  minWidths?: readonly (number | undefined)[];
  /** The stream the table is for (its `columns` is the width to fit): stdout unless said. */
  stream?: OutStream;
}

/** A table laid out for the terminal, and the headers of the columns left out to make it fit. */
interface TableLayout {
  text: string;
  omitted: string[];
}

/** A column is not shrunk below its header's width, up to this, nor below MIN_COLUMN (unless its content is narrower). */
const HEADER_FLOOR = 12;
const MIN_COLUMN = 6;
/** Columns are left out before the others are cut below this (or their natural width, if narrower). */
const WANT = 20;

/** A column to fit: its widest cell (header included), the width it should not go below, the width it is worth showing at. */
interface ColumnNeed {
  natural: number;
  floor: number;
  /** Columns are left out until the rest get this much (readable values rather than every cell cut); default `floor`. */
  want?: number;
}

/** Two spaces between columns, as gh's tables: no frame, so every column of the terminal goes to content. */
const GAP = '  ';

/** Columns a table of `n` columns spends on the spaces between them. */
export function gapsWidth(n: number): number {
  return Math.max(0, n - 1) * GAP.length;
}

/**
 * Content widths that fit `total` terminal columns, `undefined` for a column left out. Columns that fit keep
 * their natural width. Otherwise the last columns (the lowest priority: columns come in order of priority)
 * are left out until the others get what they `want` (down to two columns), then, while even the floors do
 * not fit, down to the first; never when `dropping` is off (a record). The room is then shared out
 * widest-first (one cap for every column, none below its floor), so a long text column shrinks before a
 * short one is cut; the few columns of rounding go to the first columns.
 */
export function fitWidths(cols: readonly ColumnNeed[], total: number, dropping = true): (number | undefined)[] {
  const shown = cols.map((_, i) => i);
  const sum = (need: (c: ColumnNeed) => number) => shown.reduce((s, i) => s + need(cols[i]!), 0) + gapsWidth(shown.length);
  while (dropping && shown.length > 2 && sum((c) => c.want ?? c.floor) > total) shown.pop();
  while (dropping && shown.length > 1 && sum((c) => c.floor) > total) shown.pop();
  const room = total - gapsWidth(shown.length);
  const natural = shown.map((i) => cols[i]!.natural);
  let widths: number[];
  if (natural.reduce((a, b) => a + b, 0) <= room) widths = natural;
  else {
    const floors = shown.map((i) => cols[i]!.floor);
    const at = (cap: number) => natural.map((n, k) => Math.max(floors[k]!, Math.min(n, cap)));
    const sumOf = (ws: number[]) => ws.reduce((a, b) => a + b, 0);
    let lo = 0;
    let hi = Math.max(...natural);
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      if (sumOf(at(mid)) <= room) lo = mid;
      else hi = mid - 1;
    }
    widths = at(lo);
    let spare = room - sumOf(widths);
    for (let k = 0; k < widths.length && spare > 0; k++) {
      const give = Math.min(spare, natural[k]! - widths[k]!);
      if (give > 0) {
        widths[k]! += give;
        spare -= give;
      }
    }
    // Even the floors do not fit (a terminal narrower than the `_id`): shrink to the room, last column first;
    // cells of a column that must stay whole are then broken over lines instead of cut.
    let excess = sumOf(widths) - Math.max(room, widths.length);
    for (let k = widths.length - 1; k >= 0 && excess > 0; k--) {
      const take = Math.min(excess, widths[k]! - 1);
      widths[k]! -= take;
      excess -= take;
    }
  }
  const out: (number | undefined)[] = cols.map(() => undefined);
  shown.forEach((i, k) => (out[i] = widths[k]));
  return out;
}

/**
 * Lay rows out as a table in gh's borderless style that fits the stream's terminal width (see fitWidths),
 * measured by display width: a header row, then one line per row, columns aligned and two spaces apart,
 * no frame and no rule lines. Each cell is escaped (terminalText), cut or wrapped to its column, padded,
 * and only then joined and the header made bold, so no escape code is ever cut and no line is wider than
 * the terminal. Colour only when useColor says so (a TTY, NO_COLOR unset). The last column is not padded:
 * no line ends in spaces.
 *
 * Drawn here rather than by cli-table3 (0.6.5, the latest): it measures cells with string-width 4, which
 * counts an emoji ZWJ sequence such as 🧑‍💻 as 5 columns (measured; string-width 8 says 2), so it pads or cuts
 * cells already fitted and lines come out ragged or wider than the terminal; and it wraps cells after they
 * were coloured (a bold header shorter than its column split inside its escape: `fi` / `eld␛[2`). The
 * fitting is the part no table library does by display width; the joining is the few lines below.
 */
export function layoutTable(ctx: Pick<IoContext, 'stdout' | 'stderr' | 'env'>, head: readonly string[], rows: readonly (readonly unknown[])[], opts: TableOptions = {}): TableLayout {
  const wrap = opts.wrap ?? false;
  const stream = opts.stream ?? ctx.stdout;
  // Headers (field names) and cells are the server's text: escaped so none moves the cursor or retitles the
  // terminal. A line break in a value is shown as `\n` in every table, a list's row or a record's value alike:
  // one rule, so a value reads the same in `card list` and `card get` (a record wraps only at spaces).
  const heads = head.map((h) => terminalText(h));
  const raws = rows.map((row) => heads.map((_, i) => valueText(row[i])));
  const cells = raws.map((row) => row.map((raw) => terminalText(raw)));
  const keep = new Set(opts.keep ?? []);
  const needs = heads.map((shownHead, i): ColumnNeed => {
    let natural = displayWidth(shownHead);
    for (const row of cells) natural = Math.max(natural, displayWidth(row[i]!));
    natural = Math.max(1, natural);
    const floor = keep.has(head[i]!) ? natural : Math.min(natural, Math.max(MIN_COLUMN, Math.min(displayWidth(shownHead), HEADER_FLOOR)));
    const least = Math.min(natural, Math.max(floor, opts.minWidths?.[i] ?? 0));
    return { natural, floor: least, want: Math.max(least, Math.min(natural, WANT)) };
  });
  const widths = fitWidths(needs, terminalColumns(stream), !wrap);
  const shown = heads.map((_, i) => i).filter((i) => widths[i] !== undefined);
  const fit = (text: string, raw: string, i: number): string[] => {
    const width = widths[i]!;
    if (wrap) return wrapText(text, width).flatMap((line) => breakText(line, width));
    if (keep.has(head[i]!)) return breakText(text, width);
    // A cell holding escapes is cut from its raw text, so no escape is cut in half (`\e[2K`, never `\e[…`).
    return [text === raw ? shorten(text, width) : terminalText(raw, { maxColumns: width })];
  };
  const bold = useColor(ctx, stream);
  const rowLines = (texts: readonly string[], raw: readonly string[], strong = false): string[] => {
    const blocks = shown.map((i) => fit(texts[i]!, raw[i]!, i));
    const height = Math.max(1, ...blocks.map((b) => b.length));
    const out: string[] = [];
    for (let line = 0; line < height; line++) {
      const parts = blocks.map((block, k) => {
        const text = block[line] ?? '';
        const last = k === blocks.length - 1;
        const pad = last ? '' : ' '.repeat(Math.max(0, widths[shown[k]!]! - displayWidth(text)));
        // Bold goes on text already cut to its column: nothing measures or cuts it after this.
        return strong && bold && text !== '' ? `\u001b[1m${text}\u001b[22m${pad}` : text + pad;
      });
      // An empty last cell would leave the padding of the one before: no line ends in spaces.
      out.push(parts.join(GAP).replace(/ +$/, ''));
    }
    return out;
  };
  const lines = [...rowLines(heads, head, true), ...cells.flatMap((row, r) => rowLines(row, raws[r]!))];
  return { text: `${lines.join('\n')}\n`, omitted: heads.filter((_, i) => widths[i] === undefined) };
}

/** The table as text (see layoutTable), for a caller whose columns always fit (a two-column summary). */
export async function renderTable(ctx: Pick<IoContext, 'stdout' | 'stderr' | 'env'>, head: string[], rows: unknown[][], opts: TableOptions = {}): Promise<string> {
  return layoutTable(ctx, head, rows, opts).text;
}

/** What printTable adds around the table. */
interface PrintTableOptions extends TableOptions {
  /** A line after the table, on stdout and in the pager with it (`card list`'s next page). */
  footer?: string;
  /** How to see columns left out to fit the terminal, for the note on stderr (e.g. `--fields`, `--format`). */
  omittedHint?: string;
}

/** The note on stderr naming the columns left out (the first few) and how to see them. */
export function omittedNote(omitted: readonly string[], hint = 'widen the terminal to see them'): string {
  const named = omitted.slice(0, 4).join(', ');
  const more = omitted.length > 4 ? ` and ${groupDigits(omitted.length - 4)} more` : '';
  return `${plural(omitted.length, 'column')} not shown to fit the terminal (${named}${more}): ${hint}`;
}

/**
 * Print a table on stdout (a terminal): laid out by layoutTable, through the pager when longer than the
 * screen (src/io/pager.ts), then a note on stderr if columns were left out (after the pager, so it is seen).
 */
export async function printTable(ctx: PagerContext, head: readonly string[], rows: readonly (readonly unknown[])[], opts: PrintTableOptions = {}): Promise<void> {
  const { text, omitted } = layoutTable(ctx, head, rows, opts);
  await writePaged(ctx, opts.footer === undefined ? text : `${text}${terminalText(opts.footer)}\n`);
  if (omitted.length > 0) createStatus(ctx).info(omittedNote(omitted, opts.omittedHint));
}
