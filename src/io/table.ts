import { type Context, useColor } from '../context.js';
import { terminalText, valueText } from './text.js';

/** How a table fits the terminal: truncate cells (lists) or wrap them (a single record's values). */
export interface TableOptions {
  wrap?: boolean;
}

const MIN_COLUMN = 6;
const MAX_NATURAL = 48;

/** Column widths (content only) that fit `total` terminal columns: shrink the widest column until it fits. */
export function fitWidths(natural: number[], total: number): number[] {
  const widths = natural.map((w) => Math.max(1, w));
  // Each column costs 2 padding + 1 border, plus the closing border.
  const frame = widths.length * 3 + 1;
  let excess = widths.reduce((a, b) => a + b, 0) + frame - total;
  while (excess > 0) {
    let widest = 0;
    for (let i = 1; i < widths.length; i++) if (widths[i]! > widths[widest]!) widest = i;
    if (widths[widest]! <= MIN_COLUMN) break;
    widths[widest]!--;
    excess--;
  }
  return widths;
}

/**
 * Render rows as a boxed table with cli-table3 (imported here, so only a TTY run pays for it).
 * Callers decide it is a TTY; this only fits the table to `stdout.columns` and honours NO_COLOR.
 */
export async function renderTable(ctx: Context, head: string[], rows: unknown[][], opts: TableOptions = {}): Promise<string> {
  const { default: Table } = await import('cli-table3');
  // Headers (field names) and cells are the server's text: escaped so none moves the cursor or retitles
  // the terminal. A wrapped cell keeps its line breaks; a list row shows them as `\n`, one line per card.
  const cells = rows.map((row) => row.map((v) => terminalText(valueText(v), { keepNewlines: opts.wrap })));
  const heads = head.map((h) => terminalText(h));
  const natural = heads.map((h, i) => {
    let w = h.length;
    for (const row of cells) for (const line of (row[i] ?? '').split('\n')) w = Math.max(w, line.length);
    return opts.wrap ? w : Math.min(w, MAX_NATURAL);
  });
  const widths = fitWidths(natural, ctx.stdout.columns && ctx.stdout.columns > 0 ? ctx.stdout.columns : 100);
  // Bold is applied here rather than through cli-table3's `style.head`: that goes through @colors/colors,
  // which makes its own colour decision (off whenever `CI` is set, on under FORCE_COLOR) instead of ours.
  const bold = useColor(ctx, ctx.stdout);
  const table = new Table({
    head: bold ? heads.map((h) => `\u001b[1m${h}\u001b[22m`) : heads,
    colWidths: widths.map((w) => w + 2),
    wordWrap: opts.wrap ?? false,
    wrapOnWordBoundary: false,
    truncate: '…',
    style: { head: [], border: [] },
  });
  for (const row of cells) table.push(row);
  return `${table.toString()}\n`;
}
