// --dry-run (issue 4, section 8): read, map and check every row; count what a run would do. Sends nothing.
import type { KeyIndex } from './match-index.js';
import { type PrepareState, prepareRow } from './prepare.js';
import type { ColumnMapping, CsvItem } from './types.js';

/** What a run would do with the file. */
export interface Plan {
  rows: number;
  creates: number;
  /** Rows that carry an `_id` (from the file or --match-on): updates on an Update-if-exists board. */
  updates: number;
  rejected: number;
  /** The first rejections, for the report (all of them are counted). */
  rejections: { line: number; reason: string }[];
  /** The first rows as they would be sent. */
  sample: { line: number; body: Record<string, string> }[];
}

/** Walk every row through the same checks as a run. */
export async function planImport(
  items: AsyncIterable<CsvItem>,
  opts: { columns: ColumnMapping[]; sendEmpty: boolean; match?: KeyIndex; sampleSize?: number; maxRejections?: number },
): Promise<Plan> {
  const st: PrepareState = { columns: opts.columns, sendEmpty: opts.sendEmpty, match: opts.match, seenKeys: new Map() };
  const plan: Plan = { rows: 0, creates: 0, updates: 0, rejected: 0, rejections: [], sample: [] };
  const reject = (line: number, reason: string) => {
    plan.rejected++;
    if (plan.rejections.length < (opts.maxRejections ?? 20)) plan.rejections.push({ line, reason });
  };
  for await (const item of items) {
    if (item.kind === 'header') continue;
    plan.rows++;
    if (item.kind === 'bad') {
      reject(item.line, item.reason);
      continue;
    }
    const p = prepareRow(st, item.line, item.values);
    if (p.kind === 'reject') {
      reject(item.line, p.message);
      continue;
    }
    if (p.body._id !== undefined) plan.updates++;
    else plan.creates++;
    if (plan.sample.length < (opts.sampleSize ?? 5)) plan.sample.push({ line: item.line, body: p.body });
  }
  return plan;
}
