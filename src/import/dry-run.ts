// --dry-run: read, map and check every row; count what a run would do, under the run's own state names. Sends nothing.
import type { Api } from '../api/types.js';
import { ownValue } from '../own-keys.js';
import { canonicalJson, type KeyIndex } from './match-index.js';
import { type PrepareState, prepareRow } from './prepare-row.js';
import type { ColumnMapping, CsvItem } from './types.js';

/** What a run would do with the file, counted under the run's own state names (types.ts RowState). */
export interface DryRunReport {
  rows: number;
  /** Rows without an `_id`: a run would create them. */
  created: number;
  /** Rows that carry an `_id` (from the file or --match-on): updates on an Update-if-exists board. */
  updated: number;
  /** --match-on rows equal to their card: not sent. */
  unchanged: number;
  rejected: number;
  /** The first rejections, for the report (all of them are counted). */
  rejections: { line: number; reason: string }[];
  /** The first rows as they would be sent. */
  sample: { line: number; body: Record<string, unknown> }[];
  /** The first rows that would update a --match-on card, for the report of what changes. */
  updateSample: { line: number; id: string; body: Record<string, unknown> }[];
}

/** Walk every row through the same checks as a run. */
export async function dryRun(
  items: AsyncIterable<CsvItem>,
  opts: { columns: ColumnMapping[]; sendEmpty: boolean; match?: KeyIndex; force?: boolean; sampleSize?: number; maxRejections?: number },
): Promise<DryRunReport> {
  const st: PrepareState = { columns: opts.columns, sendEmpty: opts.sendEmpty, match: opts.match, seenKeys: new Map(), force: opts.force };
  const report: DryRunReport = { rows: 0, created: 0, updated: 0, unchanged: 0, rejected: 0, rejections: [], sample: [], updateSample: [] };
  const reject = (line: number, reason: string) => {
    report.rejected++;
    if (report.rejections.length < (opts.maxRejections ?? 20)) report.rejections.push({ line, reason });
  };
  for await (const item of items) {
    if (item.kind === 'header') continue;
    report.rows++;
    if (item.kind === 'bad') {
      reject(item.line, item.reason);
      continue;
    }
    const prepared = prepareRow(st, item.line, item.values);
    if (prepared.kind === 'reject') {
      reject(item.line, prepared.message);
      continue;
    }
    if (prepared.kind === 'unchanged') {
      report.unchanged++;
      continue;
    }
    if (prepared.body._id !== undefined) {
      report.updated++;
      if (prepared.idFromIndex && report.updateSample.length < (opts.sampleSize ?? 5)) report.updateSample.push({ line: item.line, id: String(prepared.body._id), body: prepared.body });
    } else report.created++;
    if (report.sample.length < (opts.sampleSize ?? 5)) report.sample.push({ line: item.line, body: prepared.body });
  }
  return report;
}

/** What one update would change on its card: `from` and `to` as JSON text (absent: `(none)`). */
export interface RowChanges {
  line: number;
  id: string;
  changes: { field: string; from: string; to: string }[];
}

/** Compare the first updates with their cards as they are now (one GET each: only a few rows are shown). */
export async function describeChanges(api: Pick<Api, 'getCard'>, sample: DryRunReport['updateSample']): Promise<RowChanges[]> {
  const text = (v: unknown) => (v === undefined ? '(none)' : typeof v === 'string' ? v : JSON.stringify(v));
  const out: RowChanges[] = [];
  for (const update of sample) {
    // A card deleted since the index was read: every field shows as new.
    const card = ((await api.getCard(update.id).catch(() => undefined)) ?? {}) as Record<string, unknown>;
    // Own keys only: a field named `constructor` absent from the card is absent, not Object.prototype's.
    const was = (f: string) => ownValue(card, f);
    const changes = Object.keys(update.body)
      .filter((f) => f !== '_id' && canonicalJson(was(f)) !== canonicalJson(update.body[f]))
      .map((field) => ({ field, from: text(was(field)), to: text(update.body[field]) }));
    out.push({ line: update.line, id: update.id, changes });
  }
  return out;
}
